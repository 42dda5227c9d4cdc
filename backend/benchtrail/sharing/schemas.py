from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchtrail.validation import SafeModel


class SnapshotCreate(SafeModel):
    run: str = Field(description="Slug of the run whose view is frozen", min_length=1, max_length=16)
    view: dict[str, Any] = Field(default_factory=dict,
                                 description="The view's state, e.g. {\"path\": \"/r/abc\", \"query\": \"load=50\"}: "
                                             "kept as given and handed back, so the frozen page opens as it was")
    title: str | None = Field(default=None, max_length=300)


class SnapshotOut(BaseModel):
    slug: str
    project: str
    kind: Literal["run"]
    title: str
    view: dict[str, Any]
    data: dict[str, Any] = Field(description="The API answers the view showed when frozen: `run` (the run "
                                             "document) and `overheads` (metric -> the run's overheads)")
    markdown: str = Field(description="The seed-shaped tables of the frozen data")
    created_by: str
    created_at: datetime
    permalink: str

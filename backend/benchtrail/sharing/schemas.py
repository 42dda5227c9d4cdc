from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchtrail.validation import SafeModel


class SnapshotView(SafeModel):
    """The frozen view's URL: kept as given and handed back, so the page opens as it was."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(default="", max_length=500, description="e.g. /r/abc")
    query: str = Field(default="", max_length=2000, description="The view state, e.g. load=50&p=p99")


class SnapshotCreate(SafeModel):
    model_config = ConfigDict(extra="forbid")
    run: str = Field(description="Slug of the run whose view is frozen", min_length=1, max_length=16)
    view: SnapshotView = Field(default_factory=SnapshotView)
    title: str | None = Field(default=None, max_length=300)


class SnapshotOut(BaseModel):
    slug: str
    project: str
    kind: Literal["run"]
    title: str
    view: SnapshotView
    data: dict[str, Any] = Field(description="The API answers the view showed when frozen: `run` (the run "
                                             "document) and `overheads` (metric -> the run's overheads)")
    markdown: str = Field(description="The seed-shaped tables of the frozen data")
    created_by: str
    created_at: datetime
    permalink: str

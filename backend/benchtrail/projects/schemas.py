from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field
from benchtrail.validation import SafeModel


class ProjectCreate(SafeModel):
    slug: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$", examples=["easeagent"])
    name: str | None = Field(default=None, max_length=200)
    description: str = ""
    is_public: bool = True


class ProjectOut(BaseModel):
    slug: str
    name: str
    description: str
    is_public: bool
    created_at: datetime
    run_count: int = 0
    latest_run_at: datetime | None = None
    open_alerts: int = 0


class ProjectList(BaseModel):
    items: list[ProjectOut]


class TokenCreate(SafeModel):
    name: str = Field(min_length=1, max_length=200)
    role: Literal["viewer", "uploader", "admin"]


class TokenCreated(BaseModel):
    id: int
    name: str
    role: str
    project: str | None
    token: str = Field(description="Shown once; only its hash is stored.")

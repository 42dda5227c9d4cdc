from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from benchtrail.db import Base
from benchtrail.models._types import created_at_column


class Snapshot(Base):
    """A frozen view: the data a view showed when it was frozen and the view's state, under a slug of
    its own. Never updated: re-analysing the run later does not change what the snapshot shows."""

    __tablename__ = "snapshots"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(16), unique=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # run
    title: Mapped[str] = mapped_column(String(300))
    view: Mapped[dict[str, Any]] = mapped_column(JSONB)   # the view's URL path and query
    data: Mapped[dict[str, Any]] = mapped_column(JSONB)   # the API answers the view showed
    markdown: Mapped[str] = mapped_column(String)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = created_at_column()

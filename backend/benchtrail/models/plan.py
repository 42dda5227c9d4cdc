from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from benchtrail.db import Base
from benchtrail.models._types import created_at_column


class Plan(Base):
    """A stored, versioned plan. Editing a plan adds a version; runs keep the version they ran."""

    __tablename__ = "plans"
    __table_args__ = (UniqueConstraint("project_id", "name", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer, default=1)
    pool: Mapped[str] = mapped_column(String(64), default="default")
    body: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # The YAML text the plan was saved from, comments and key order intact; None when saved as JSON.
    source_yaml: Mapped[str | None] = mapped_column(Text)
    # Scenario request headers ({scenario: {header: value}}), never returned; the body holds "***".
    secrets: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = created_at_column()


class Schedule(Base):
    __tablename__ = "schedules"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    plan_name: Mapped[str] = mapped_column(String(200))
    cron: Mapped[str] = mapped_column(String(100))
    agent_version: Mapped[str | None] = mapped_column(String(100))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    next_fire_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), index=True)
    last_fired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = created_at_column()

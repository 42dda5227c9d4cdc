from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, DateTime, ForeignKey, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from benchtrail.db import Base
from benchtrail.models._types import created_at_column


class Project(Base):
    __tablename__ = "projects"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    is_public: Mapped[bool] = mapped_column(Boolean, default=True)
    # Analysis settings: thresholds per metric, confirm-before-alert, ...
    settings: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = created_at_column()


class ApiToken(Base):
    """A bearer token. Only its SHA-256 is stored; project_id NULL means a site-wide admin token."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))  # viewer | uploader | admin | runner
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = created_at_column()
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Runner tokens only: the pools whose runs it may claim; NULL = every pool.
    pools: Mapped[list[str] | None] = mapped_column(JSONB)


class ProjectChange(Base):
    """One row per (project, transaction that wrote its data), inserted by the database's triggers
    (migration 0018). Never updated; folded into ProjectRevision.folded by `revisions.fold`."""

    __tablename__ = "project_changes"

    project_id: Mapped[int] = mapped_column(primary_key=True)
    txid: Mapped[int] = mapped_column(BigInteger, primary_key=True)


class ProjectRevision(Base):
    """The number of a project's change rows already folded (deleted from project_changes)."""

    __tablename__ = "project_revisions"

    project_id: Mapped[int] = mapped_column(primary_key=True)
    folded: Mapped[int] = mapped_column(BigInteger, default=0)

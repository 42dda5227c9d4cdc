from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, DateTime, Double, ForeignKey, Integer, String, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from benchtrail.db import Base
from benchtrail.models._types import created_at_column


class Alert(Base):
    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    # The run where the new level starts (the culprit) and the run whose analysis found it.
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    detected_by_run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"),
                                                           index=True)
    trail_id: Mapped[int] = mapped_column(ForeignKey("trails.id", ondelete="CASCADE"), index=True)
    metric: Mapped[str] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(16))  # trail | overhead
    direction: Mapped[str] = mapped_column(String(16))  # regression | improvement
    magnitude_abs: Mapped[float] = mapped_column(Double)
    magnitude_rel: Mapped[float | None] = mapped_column(Double)
    p_value: Mapped[float | None] = mapped_column(Double)
    before_value: Mapped[float | None] = mapped_column(Double)
    after_value: Mapped[float | None] = mapped_column(Double)
    effect_sigma: Mapped[float | None] = mapped_column(Double)
    # new | acknowledged | investigating | confirmed | fixed | wontfix | invalid (people) | withdrawn (analysis)
    state: Mapped[str] = mapped_column(String(16), default="new", index=True)
    # Why the analysis put the alert in its state (withdrawn: the evidence that no longer supports it).
    state_reason: Mapped[str | None] = mapped_column(Text)
    assignee: Mapped[str | None] = mapped_column(String(200))
    notes: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now(),
                                                 onupdate=func.now())


class AlertEvent(Base):
    __tablename__ = "alert_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    alert_id: Mapped[int] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"), index=True)
    from_state: Mapped[str | None] = mapped_column(String(16))
    to_state: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(200))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = created_at_column()


class Annotation(Base):
    __tablename__ = "annotations"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(32))  # release | jdk | infra | other
    title: Mapped[str] = mapped_column(String(300))
    agent_version: Mapped[str | None] = mapped_column(String(100))
    at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    known_change: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = created_at_column()


class Webhook(Base):
    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(1000))
    style: Mapped[str] = mapped_column(String(16), default="generic")  # generic | slack
    secret: Mapped[str] = mapped_column(String(200))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = created_at_column()


class WebhookDelivery(Base):
    __tablename__ = "webhook_deliveries"

    id: Mapped[int] = mapped_column(primary_key=True)
    webhook_id: Mapped[int] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"), index=True)
    alert_id: Mapped[int | None] = mapped_column(ForeignKey("alerts.id", ondelete="SET NULL"))
    status: Mapped[str] = mapped_column(String(16))  # pending | delivered | failed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    response_code: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    created_at: Mapped[datetime] = created_at_column()


class Overhead(Base):
    """A cell's A/B result against the reference variant's cell of the same run, scenario, load and
    mode, for one metric. Computed by the analysis task; `detail` holds the rest of the AbResult."""

    __tablename__ = "overheads"
    __table_args__ = (UniqueConstraint("cell_id", "metric"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    trail_id: Mapped[int] = mapped_column(ForeignKey("trails.id", ondelete="CASCADE"))
    cell_id: Mapped[int] = mapped_column(ForeignKey("cells.id", ondelete="CASCADE"))
    ref_cell_id: Mapped[int] = mapped_column(ForeignKey("cells.id", ondelete="CASCADE"))
    metric: Mapped[str] = mapped_column(String(32))
    reference: Mapped[float] = mapped_column(Double)
    variant: Mapped[float] = mapped_column(Double)
    abs_diff: Mapped[float] = mapped_column(Double)
    rel_diff: Mapped[float | None] = mapped_column(Double)
    ci_low: Mapped[float | None] = mapped_column(Double)
    ci_high: Mapped[float | None] = mapped_column(Double)
    verdict: Mapped[str] = mapped_column(String(32))
    detail: Mapped[dict[str, Any]] = mapped_column(JSONB)


class TrailAnalysis(Base):
    """The change points of one trail (kind 'trail') or its overhead ('overhead') for one metric, each
    with its run and x-axis key, so the next run re-analyses only the window around its own point.
    `settings_key` identifies the settings and known change points they were found with."""

    __tablename__ = "trail_analyses"

    trail_id: Mapped[int] = mapped_column(ForeignKey("trails.id", ondelete="CASCADE"), primary_key=True)
    metric: Mapped[str] = mapped_column(String(32), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    settings_key: Mapped[str] = mapped_column(String(64))
    change_points: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now(),
                                                 onupdate=func.now())

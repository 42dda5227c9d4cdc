"""The result model: environments, runs and their variants/scenarios/loads, cells, series, trails."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (BigInteger, Boolean, CheckConstraint, DateTime, Double, ForeignKey, Index, Integer,
                        LargeBinary, String, Text, UniqueConstraint, func)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from benchtrail.db import Base
from benchtrail.models._types import created_at_column


class Environment(Base):
    __tablename__ = "environments"
    __table_args__ = (UniqueConstraint("project_id", "fingerprint"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    fingerprint: Mapped[str] = mapped_column(String(64))
    cpus: Mapped[float | None] = mapped_column(Double)
    memory_mb: Mapped[int | None] = mapped_column(Integer)
    instance_type: Mapped[str | None] = mapped_column(String(100))
    os: Mapped[str | None] = mapped_column(String(200))
    runtime: Mapped[str | None] = mapped_column(String(200))
    attributes: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    created_at: Mapped[datetime] = created_at_column()


class Run(Base):
    __tablename__ = "runs"
    # The values of runstate/lifecycle.py's enums; a trigger (migration 0005) also refuses illegal moves.
    __table_args__ = (
        UniqueConstraint("project_id", "idempotency_key"),
        Index("ix_runs_project_id_created_at_id", "project_id", "created_at", "id"),
        CheckConstraint("status IN ('queued', 'running', 'ingesting', 'completed', 'failed', 'cancelled')",
                        name="status"),
        CheckConstraint("analysis_status IN ('pending', 'done', 'failed')", name="analysis_status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(16), unique=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    environment_id: Mapped[int | None] = mapped_column(ForeignKey("environments.id"), index=True)
    plan_id: Mapped[int | None] = mapped_column(ForeignKey("plans.id", ondelete="SET NULL"), index=True)
    source: Mapped[str] = mapped_column(String(16))  # upload | schedule | manual
    tool: Mapped[str | None] = mapped_column(String(32))
    agent_version: Mapped[str | None] = mapped_column(String(100), index=True)
    app_version: Mapped[str | None] = mapped_column(String(100))
    commit: Mapped[str | None] = mapped_column(String(64))
    branch: Mapped[str | None] = mapped_column(String(200), index=True)
    labels: Mapped[dict[str, str]] = mapped_column(JSONB, default=dict)
    # A benchtrail.runstate.lifecycle.RunStatus; changed only by lifecycle.transition.
    status: Mapped[str] = mapped_column(String(16), index=True)
    status_detail: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # A lifecycle.AnalysisStatus; changed only by lifecycle.analysis_transition.
    analysis_status: Mapped[str] = mapped_column(String(16), server_default="pending")
    is_valid: Mapped[bool] = mapped_column(Boolean, default=True)
    validity: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    criteria: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list)
    progress: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    # The Idempotency-Key of the accepted results of a plan run: the same key again is the same upload.
    results_key: Mapped[str | None] = mapped_column(String(200))
    meta: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # When the current stage last showed life: a runner's report, or ingest/analysis being queued.
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # When its cells were last measured again from its stored files (`benchtrail admin reingest`).
    remeasured_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = created_at_column()


class RunShare(Base):
    """One share of a plan run over several load generators (plan `generators`; runstate/shares.py)."""

    __tablename__ = "run_shares"
    __table_args__ = (
        UniqueConstraint("run_id", "index"),
        CheckConstraint("status IN ('queued', 'running', 'delivered', 'failed', 'cancelled')", name="status"),
        CheckConstraint('"index" >= 0', name="index"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column(Integer)          # 0-based; shown 1-based ("share 1 of 2")
    status: Mapped[str] = mapped_column(String(16), server_default="queued")
    runner: Mapped[str | None] = mapped_column(String(200))
    host: Mapped[str | None] = mapped_column(String(200))
    runner_token_id: Mapped[int | None] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(Text)
    results_key: Mapped[str | None] = mapped_column(String(200))
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Blob(Base):
    """A raw file exactly as received, content-addressed on disk, kept so any cell can be recomputed."""

    __tablename__ = "blobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    size: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = created_at_column()


class UnrecordedBlob(Base):
    """A raw file an upload (`attempt`: one request) is writing to the store before the transaction that
    records it as a blob (uploads/service.py `KeptFiles`). That transaction removes the rows; beat's sweeper
    removes the ones an upload that failed or whose process died left, and the object with them when no blob
    row refers to it."""

    __tablename__ = "unrecorded_blobs"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    attempt: Mapped[str] = mapped_column(String(32), primary_key=True)
    written_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now(), index=True)


class RunFile(Base):
    __tablename__ = "run_files"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    filename: Mapped[str] = mapped_column(String(500))
    variant: Mapped[str] = mapped_column(String(100))
    format: Mapped[str] = mapped_column(String(32))
    # scenario/load overrides and parse options given by the uploader
    options: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    position: Mapped[int] = mapped_column(Integer, default=0)


class Variant(Base):
    __tablename__ = "variants"
    __table_args__ = (UniqueConstraint("run_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    is_reference: Mapped[bool] = mapped_column(Boolean, default=False)
    position: Mapped[int] = mapped_column(Integer, default=0)


class Scenario(Base):
    __tablename__ = "scenarios"
    __table_args__ = (UniqueConstraint("run_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(500))
    position: Mapped[int] = mapped_column(Integer, default=0)


class Load(Base):
    __tablename__ = "loads"
    __table_args__ = (UniqueConstraint("run_id", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(16))
    value: Mapped[float | None] = mapped_column(Double)
    requests: Mapped[int | None] = mapped_column(BigInteger)
    duration_s: Mapped[float | None] = mapped_column(Double)
    label: Mapped[str] = mapped_column(String(100))


class Trail(Base):
    """Identity of one comparable cell across runs: project, environment fingerprint, scenario, load,
    variant and JMH mode. `hash` is the SHA-256 of those controlled variables. A trail of metric M is
    this trail's cells' column M ordered by agent version."""

    __tablename__ = "trails"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    env_fingerprint: Mapped[str] = mapped_column(String(64))
    scenario: Mapped[str] = mapped_column(String(500))
    load_key: Mapped[str] = mapped_column(String(100))
    variant: Mapped[str] = mapped_column(String(100))
    mode: Mapped[str] = mapped_column(String(64), default="")
    # One named process of the variant (plan `processes`: consumer, provider); '' = the variant.
    process: Mapped[str] = mapped_column(String(32), default="", server_default="")
    created_at: Mapped[datetime] = created_at_column()


class Cell(Base):
    __tablename__ = "cells"
    __table_args__ = (UniqueConstraint("run_id", "variant_id", "scenario_id", "load_id", "mode", "process"),
                      Index("ix_cells_trail_id_order_key", "trail_id", "order_key"))

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    variant_id: Mapped[int] = mapped_column(ForeignKey("variants.id", ondelete="CASCADE"))
    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"))
    load_id: Mapped[int] = mapped_column(ForeignKey("loads.id", ondelete="CASCADE"))
    trail_id: Mapped[int] = mapped_column(ForeignKey("trails.id"), index=True)
    # The run's place on the trail's x-axis as sortable bytes (trails.history.order_bytes), set by the
    # analysis, so the points around a new one are read by index rather than by loading the trail.
    order_key: Mapped[bytes | None] = mapped_column(LargeBinary)
    mode: Mapped[str] = mapped_column(String(64), default="")
    # A resource cell of one named process of the variant (plan `processes`); '' = the variant.
    process: Mapped[str] = mapped_column(String(32), default="", server_default="")
    source: Mapped[str] = mapped_column(String(16))  # samples | reported
    is_transaction: Mapped[bool] = mapped_column(Boolean, default=False)
    count: Mapped[int | None] = mapped_column(BigInteger)
    errors: Mapped[int | None] = mapped_column(BigInteger)
    throughput: Mapped[float | None] = mapped_column(Double)
    duration_s: Mapped[float | None] = mapped_column(Double)
    latency_mean: Mapped[float | None] = mapped_column(Double)
    latency_min: Mapped[float | None] = mapped_column(Double)
    latency_max: Mapped[float | None] = mapped_column(Double)
    latency_p50: Mapped[float | None] = mapped_column(Double)
    latency_p75: Mapped[float | None] = mapped_column(Double)
    latency_p90: Mapped[float | None] = mapped_column(Double)
    latency_p95: Mapped[float | None] = mapped_column(Double)
    latency_p99: Mapped[float | None] = mapped_column(Double)
    latency_p999: Mapped[float | None] = mapped_column(Double)
    histogram: Mapped[str | None] = mapped_column(Text)  # HdrHistogram, compressed base64, µs
    cpu_pct: Mapped[float | None] = mapped_column(Double)
    cpu_s_per_1k: Mapped[float | None] = mapped_column(Double)
    rss_mb: Mapped[float | None] = mapped_column(Double)
    heap_mb: Mapped[float | None] = mapped_column(Double)
    achieved_rate: Mapped[float | None] = mapped_column(Double)
    score: Mapped[float | None] = mapped_column(Double)
    score_error: Mapped[float | None] = mapped_column(Double)
    score_unit: Mapped[str | None] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    replicates: Mapped[list[float]] = mapped_column(JSONB, default=list)
    extra: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    # Sample-based repetitions in execution order, what the A/B analysis uses (never sent whole by
    # the API): [{position, count, latency_mean, latency_p50..p999, ..., histogram, timeline?}];
    # see `benchtrail.ingest.service.repetition_record`.
    repetitions: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, default=list, server_default="[]")


class Series(Base):
    __tablename__ = "series"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    variant_id: Mapped[int] = mapped_column(ForeignKey("variants.id", ondelete="CASCADE"))
    scenario_id: Mapped[int | None] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"))
    load_id: Mapped[int] = mapped_column(ForeignKey("loads.id", ondelete="CASCADE"))
    metric: Mapped[str] = mapped_column(String(32))
    process: Mapped[str] = mapped_column(String(32), default="", server_default="")
    interval_ms: Mapped[int | None] = mapped_column(Integer)
    t_ms: Mapped[list[int]] = mapped_column(ARRAY(BigInteger))
    values: Mapped[list[float]] = mapped_column(ARRAY(Double))


class MetricDef(Base):
    __tablename__ = "metrics"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit: Mapped[str] = mapped_column(String(32))
    direction: Mapped[str] = mapped_column(String(8))
    title: Mapped[str] = mapped_column(String(100))


class ResultsUpload(Base):
    """A runner's results package arriving in chunks (uploads/results.py): the server's offset is
    `received`; the chunks are in the raw file store, under the names in `parts` (in package order; NULL for
    a session opened before revision 0022, whose parts are named by their offsets), until the session is
    committed, exactly once."""

    __tablename__ = "results_uploads"
    __table_args__ = (UniqueConstraint("run_id", "idempotency_key"),
                      CheckConstraint("received >= 0 AND received <= size", name="received_in_size"))

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    idempotency_key: Mapped[str] = mapped_column(String(200))
    metadata_json: Mapped[str] = mapped_column("metadata", Text)
    files: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    size: Mapped[int] = mapped_column(BigInteger)
    received: Mapped[int] = mapped_column(BigInteger, server_default="0", default=0)
    parts: Mapped[list[str] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = created_at_column()
    updated_at: Mapped[datetime] = created_at_column()
    committed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

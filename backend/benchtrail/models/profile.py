"""CPU profiles: where a sampled process spent its CPU in one measured step of a cell (benchtrail.profiles)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, Double, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from benchtrail.db import Base


class Profile(Base):
    """One repetition's CPU profile of a variant at a load level (and scenario, when the step loaded one
    alone): weighted stacks, frames interned (`frames`; each stack is a list of frame indexes, root first),
    weights in CPU milliseconds (`weights`, one per stack). `requests` is the repetition's request count
    (what the profile is normalised by: CPU-ms per 1,000 requests); `raw_files` the run files it was read
    from, kept for download."""

    __tablename__ = "profiles"
    __table_args__ = (UniqueConstraint("run_id", "variant_id", "scenario_id", "load_id", "step"),
                      CheckConstraint("runtime IN ('jvm', 'go', 'python')", name="runtime"))

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    variant_id: Mapped[int] = mapped_column(ForeignKey("variants.id", ondelete="CASCADE"))
    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"))
    load_id: Mapped[int] = mapped_column(ForeignKey("loads.id", ondelete="CASCADE"))
    repetition: Mapped[int] = mapped_column(Integer)
    step: Mapped[int] = mapped_column(Integer)            # the step's place in the run (execution order)
    runtime: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(16))       # jfr | pprof | py-spy
    period_ms: Mapped[float | None] = mapped_column(Double)
    samples: Mapped[int] = mapped_column(BigInteger)
    cpu_ms: Mapped[float] = mapped_column(Double)
    requests: Mapped[int | None] = mapped_column(BigInteger)
    # samples left out: outside the load window, or stacks JFR cut at its depth (kept, under "[truncated]")
    outside_window: Mapped[int] = mapped_column(BigInteger, default=0)
    truncated: Mapped[int] = mapped_column(BigInteger, default=0)
    frames: Mapped[list[str]] = mapped_column(JSONB)
    stacks: Mapped[list[list[int]]] = mapped_column(JSONB)
    weights: Mapped[list[float]] = mapped_column(JSONB)
    agent_packages: Mapped[list[str]] = mapped_column(JSONB, default=list)
    raw_files: Mapped[list[int]] = mapped_column(JSONB, default=list)
    meta: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)

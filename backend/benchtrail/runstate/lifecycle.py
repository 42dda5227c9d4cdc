"""The life of a run, in one place. Every change of `Run.status` and `Run.analysis_status` goes
through `transition` / `analysis_transition`; the database refuses any other value (check
constraints) and any other move (a trigger built from the same tables, migration 0005).

    (new upload) ─────────────────────────────┐
    (new plan run) → queued → running → ingesting → completed
                       │         │           └───→ failed
                       │         ├──→ failed | cancelled      (runner finish, sweeper, user cancel)
                       └─────────┴──→ failed | cancelled
    failed → ingesting: late results, only from the runner that claimed the run, only while the run has
    none (its runner lost the API while delivering them; uploads/results.py attach_results)

    analysis: pending → done | failed;  failed → done (a later attempt succeeded);  done → done (forced);
    done | failed → pending: asked for again after the run was excluded from its trails or restored
    (runs/exclusion.py; migration 0019)
"""

from __future__ import annotations

from datetime import datetime, timezone
from enum import StrEnum
from typing import Any

from benchtrail.errors import Conflict, ErrorCode


class RunStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    INGESTING = "ingesting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class AnalysisStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


# Where a run may start: an upload is ingested at once, a plan run waits for a runner.
INITIAL: frozenset[RunStatus] = frozenset({RunStatus.QUEUED, RunStatus.INGESTING})
TERMINAL: frozenset[RunStatus] = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
LIVE: frozenset[RunStatus] = frozenset({RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.INGESTING})

TRANSITIONS: dict[RunStatus, frozenset[RunStatus]] = {
    RunStatus.QUEUED: frozenset({RunStatus.RUNNING, RunStatus.FAILED, RunStatus.CANCELLED}),
    RunStatus.RUNNING: frozenset({RunStatus.INGESTING, RunStatus.FAILED, RunStatus.CANCELLED}),
    RunStatus.INGESTING: frozenset({RunStatus.COMPLETED, RunStatus.FAILED}),
    RunStatus.COMPLETED: frozenset(),
    RunStatus.FAILED: frozenset({RunStatus.INGESTING}),
    RunStatus.CANCELLED: frozenset(),
}

# Back to pending: asked for again once the run's validity changed (runs/exclusion.py).
ANALYSIS_TRANSITIONS: dict[AnalysisStatus, frozenset[AnalysisStatus]] = {
    AnalysisStatus.PENDING: frozenset({AnalysisStatus.DONE, AnalysisStatus.FAILED}),
    AnalysisStatus.FAILED: frozenset({AnalysisStatus.DONE, AnalysisStatus.PENDING}),
    AnalysisStatus.DONE: frozenset({AnalysisStatus.DONE, AnalysisStatus.PENDING}),
}


def settled(status: str, analysis_status: str | None) -> bool:
    """The run will not change by itself any more: it ended and, when completed, its analysis is done
    or failed (its alerts exist only then). Ends the run's event stream and the CLI's --wait."""
    return status in TERMINAL and not (status == RunStatus.COMPLETED
                                       and (analysis_status or AnalysisStatus.PENDING) == AnalysisStatus.PENDING)


class IllegalTransition(Conflict):
    """A status change the lifecycle does not allow (409 when it reaches the API)."""

    def __init__(self, what: str, current: str, to: str) -> None:
        super().__init__(f"{what} cannot go from {current} to {to}",
                         extra={"from": current, "to": to}, code=ErrorCode.ILLEGAL_TRANSITION)


def allowed(current: str, to: str) -> bool:
    return RunStatus(to) in TRANSITIONS[RunStatus(current)]


def transition(run: Any, to: RunStatus, *, detail: dict[str, Any] | None = None,
               now: datetime | None = None) -> None:
    """Move `run` to `to` (the caller holds the row lock), stamping the times the move implies:
    started_at on running, finished_at on every terminal state, heartbeat_at when work is handed on."""
    current = RunStatus(run.status)
    if to not in TRANSITIONS[current]:
        raise IllegalTransition(f"run {getattr(run, 'slug', '')}".strip(), current.value, to.value)
    now = now or datetime.now(timezone.utc)
    run.status = to.value
    if to is RunStatus.RUNNING:
        run.started_at = now
        run.heartbeat_at = now
    elif to is RunStatus.INGESTING:
        run.heartbeat_at = now  # the sweeper re-queues an ingest nobody is working on
        run.finished_at = None  # late results of a failed run: it is live again
    if to in TERMINAL:
        run.finished_at = now
    if detail is not None:
        run.status_detail = detail


def analysis_transition(run: Any, to: AnalysisStatus) -> None:
    current = AnalysisStatus(run.analysis_status or AnalysisStatus.PENDING)
    if to not in ANALYSIS_TRANSITIONS[current]:
        raise IllegalTransition(f"analysis of run {getattr(run, 'slug', '')}".strip(), current.value, to.value)
    run.analysis_status = to.value
    if to is AnalysisStatus.PENDING:
        run.heartbeat_at = datetime.now(timezone.utc)  # the sweeper re-queues an analysis nobody works on


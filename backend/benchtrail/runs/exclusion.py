"""Excluding a run from its trails, and restoring it.

A run can measure something other than the software: a noisy neighbour, the wrong build, a load
generator that ran out of CPU where no check could tell. Once it is in the history its points move change
points and raise alerts. Excluding it keeps the run and its files and marks it invalid, saying who
excluded it and why (a validity row of source "manual"), so its points leave its trails as an invalid
run's do and it never alerts. Restoring removes that row; the run's own checks decide its validity again.

Either way the run's analysis goes back to pending and is queued (beat's sweeper queues it again should
the task be lost): the windows of its trails around its point are judged again, which withdraws, moves
or reinstates the alerts there."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.auth.principal import Principal
from benchtrail.errors import Conflict, ErrorCode
from benchtrail.ingest import validity
from benchtrail.models import Run
from benchtrail.runstate import lifecycle
from benchtrail.runstate.lifecycle import AnalysisStatus, RunStatus
from benchtrail.runstate.access import locked_run

CHECK = "excluded"


def set_excluded(session: Session, principal: Principal, slug: str, reason: str | None) -> Run:
    """Exclude the run (`reason` given) or restore it (None); the same request twice changes nothing."""
    run = locked_run(session, principal, slug, "uploader")
    if run.status != RunStatus.COMPLETED:
        raise Conflict(f"run '{slug}' is {run.status}: only a completed run has points in trails to exclude "
                       "or restore", code=ErrorCode.RUN_NOT_COMPLETED)
    rows = [r for r in run.validity or [] if r.get("source") != validity.MANUAL]
    if reason is not None:
        rows.append({"check": CHECK, "ok": False, "severity": "error", "source": validity.MANUAL,
                     "detail": f"{principal.name} excluded the run from its trails: {reason}",
                     "variant": None, "scenario": None, "load": None, "by": principal.name, "reason": reason})
    if rows == (run.validity or []):
        return run
    run.validity = rows
    run.is_valid = validity.is_valid(rows)
    if run.analysis_status != AnalysisStatus.PENDING:   # a pending analysis reads the new validity anyway
        lifecycle.analysis_transition(run, AnalysisStatus.PENDING)
    jobs.enqueue(session, "analysis.run", run.id)
    return run


def exclusion(run: Run) -> dict[str, Any] | None:
    """The run's exclusion row, if it is excluded."""
    return next((r for r in run.validity or [] if r.get("source") == validity.MANUAL and r.get("check") == CHECK), None)

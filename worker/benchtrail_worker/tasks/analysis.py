"""`analysis.run`: overheads, change points and alerts of a freshly ingested run."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import update

from benchtrail.db_boundary import unit_of_work
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail.trails.analysis import analyse_run
from benchtrail_worker.policy import TRANSIENT, task


@task("analysis.run", "analysis", soft_time_limit=600, time_limit=660)
def run_analysis(self: Any, run_id: int, force: bool = False) -> str:
    started = time.perf_counter()
    try:
        with unit_of_work() as session:
            outcome = analyse_run(session, run_id, force=force)
    except TRANSIENT:
        raise
    except Exception:
        # The CLI's --wait must not wait forever for an analysis that crashed.
        with unit_of_work() as session:
            session.execute(update(Run).where(Run.id == run_id).values(analysis_status="failed"))
        raise
    if outcome is None:
        return "skipped"
    log.info("analysed", run_id=run_id, overheads=outcome.overheads, trails=outcome.trails_analysed,
             change_points=len(outcome.findings), alerts=len(outcome.alert_ids),
             ms=round((time.perf_counter() - started) * 1000, 1))
    return "done"

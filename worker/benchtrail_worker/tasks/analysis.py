"""`analysis.run`: overheads, change points and alerts of a freshly ingested run. Several may run
at once for one project: the analysis serialises them per trail (trails.analysis)."""

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
    a = outcome.applied
    log.info("analysed", run_id=run_id, overheads=outcome.overheads, trails=outcome.trails_analysed,
             windows=outcome.windows, from_scratch=outcome.full, alerts=len(a.created), withdrawn=len(a.withdrawn),
             reinstated=len(a.reinstated), moved=len(a.moved), ms=round((time.perf_counter() - started) * 1000, 1))
    return "done"

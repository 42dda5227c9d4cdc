"""`analysis.run`: overheads, change points and alerts of a freshly ingested run. It holds the run's
row lock for its transaction: a duplicate delivery waits and then skips, and beat's sweeper can tell
a lost analysis (no lock) from one in progress. Several runs of one project may be analysed at once:
the analysis serialises them per trail (trails.analysis)."""

from __future__ import annotations

import time
from typing import Any

# The analysis modules import these where they use them, so that an API process loads them only when a request
# computes with them; the worker loads them here, once, in its main process: the pool's processes fork from it
# and share them, instead of each importing them (0.7 CPU-seconds and 60 MB apiece) at its first analysis.
import otava.analysis  # noqa: F401
import scipy.special  # noqa: F401
import scipy.stats  # noqa: F401
from sqlalchemy import select

from benchtrail.db_boundary import unit_of_work
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail.runstate import lifecycle
from benchtrail.runstate.lifecycle import AnalysisStatus
from benchtrail.trails.analysis import analyse_run
from benchtrail_worker.policy import TRANSIENT, task


@task("analysis.run", "analysis", soft_time_limit=600, time_limit=660)
def run_analysis(self: Any, run_id: int, force: bool = False) -> str:
    started = time.perf_counter()
    try:
        with unit_of_work() as session:
            # First load of the run in this session: analyse_run sees the row as it is under the lock.
            # NO KEY UPDATE: alerts inserted by other analyses may still reference this run (FK).
            if session.scalar(select(Run).where(Run.id == run_id).with_for_update(key_share=True)) is None:
                return "skipped"
            outcome = analyse_run(session, run_id, force=force)
    except TRANSIENT as exc:
        log.warning("analysis interrupted; it will be retried", run_id=run_id, error=f"{type(exc).__name__}: {exc}")
        raise
    except Exception:
        # The CLI's --wait must not wait forever for an analysis that crashed.
        with unit_of_work() as session:
            run = session.scalar(select(Run).where(Run.id == run_id).with_for_update())
            if run is not None and run.analysis_status == AnalysisStatus.PENDING:
                lifecycle.analysis_transition(run, AnalysisStatus.FAILED)
        raise
    if outcome is None:
        return "skipped"
    a = outcome.applied
    log.info("analysed", run_id=run_id, overheads=outcome.overheads, trails=outcome.trails_analysed,
             windows=outcome.windows, from_scratch=outcome.full, alerts=len(a.created), withdrawn=len(a.withdrawn),
             reinstated=len(a.reinstated), moved=len(a.moved), ms=round((time.perf_counter() - started) * 1000, 1))
    return "done"

"""`results.ingest`: parse a run's raw files and write its cells, in one transaction holding the run's
row lock (so a second delivery waits, then skips the completed run: cells are written exactly once).
A worker killed mid-way leaves nothing behind: its transaction rolls back, its lock is released, and
beat's sweeper queues the ingest again (tasks/sweeper.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from benchtrail import jobs
from benchtrail.db_boundary import unit_of_work
from benchtrail.errors import outage_kind
from benchtrail.ingest.service import IngestFailed, ingest_run
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail.runstate import lifecycle
from benchtrail.runstate.lifecycle import RunStatus
from benchtrail.storage import StorageError
from benchtrail_worker.policy import TRANSIENT, task


@task("results.ingest", "ingest", soft_time_limit=1800, time_limit=1900)
def ingest(self: Any, run_id: int) -> str:
    log.info("ingest started", run_id=run_id, attempt=self.request.retries)
    try:
        with unit_of_work() as session:
            run = ingest_run(session, run_id)
            if run is None:
                log.info("ingest skipped: the run is not waiting for one", run_id=run_id)
                return "skipped"
            jobs.enqueue(session, "analysis.run", run_id)
        log.info("ingested", run_id=run_id)
        return "completed"
    except IngestFailed as exc:
        _fail(run_id, exc.detail)
        log.info("ingest rejected", run_id=run_id, **exc.detail)
        return "failed"
    except TRANSIENT as exc:
        log.warning("ingest interrupted; it will be retried", run_id=run_id, error=f"{type(exc).__name__}: {exc}")
        raise
    except Exception as exc:
        if outage_kind(exc) == "storage":
            # The worker's disk refused a scratch file (full, ...): nothing is wrong with the run, whose
            # transaction rolled back; retried with back-off like a lost database, then by the sweeper.
            log.warning("ingest interrupted: the disk refused a file; it will be retried", run_id=run_id,
                        error=str(exc))
            raise StorageError(f"scratch space: {exc}") from exc
        # A bug must not leave the run "ingesting" forever; the raw files are kept for a re-run.
        _fail(run_id, {"reason": f"internal error while ingesting: {type(exc).__name__}: {exc}"})
        raise


def _fail(run_id: int, detail: dict[str, Any]) -> None:
    with unit_of_work() as session:
        run = session.scalar(select(Run).where(Run.id == run_id).with_for_update())
        if run is not None and run.status == RunStatus.INGESTING:
            lifecycle.transition(run, RunStatus.FAILED, detail=detail)

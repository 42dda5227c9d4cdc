from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import update

from benchtrail import jobs
from benchtrail.db_boundary import unit_of_work
from benchtrail.ingest.service import IngestFailed, ingest_run
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail_worker.policy import TRANSIENT, task


@task("results.ingest", "ingest", soft_time_limit=1800, time_limit=1900)
def ingest(self: Any, run_id: int) -> str:
    try:
        with unit_of_work() as session:
            run = ingest_run(session, run_id)
            if run is None:
                return "skipped"
            jobs.enqueue(session, "analysis.run", run_id)
        log.info("ingested", run_id=run_id)
        return "completed"
    except IngestFailed as exc:
        _fail(run_id, exc.detail)
        log.info("ingest rejected", run_id=run_id, **exc.detail)
        return "failed"
    except TRANSIENT:
        raise
    except Exception as exc:
        # A bug must not leave the run "ingesting" forever; the raw files are kept for a re-run.
        _fail(run_id, {"reason": f"internal error while ingesting: {type(exc).__name__}: {exc}"})
        raise


def _fail(run_id: int, detail: dict[str, Any]) -> None:
    with unit_of_work() as session:
        session.execute(update(Run).where(Run.id == run_id, Run.status == "ingesting")
                        .values(status="failed", status_detail=detail, finished_at=datetime.now(timezone.utc)))

"""Beat's sweeper: a run whose runner stopped sending heartbeats is failed, never restarted; an
ingest that never ran (the broker was down after the upload committed, a worker died) is queued again,
so nothing accepted is lost. Ingest is idempotent: it locks the run and skips one already done."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import or_, update

from benchtrail import jobs
from benchtrail.config import get_settings
from benchtrail.db_boundary import unit_of_work
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail_worker.policy import task

INGEST_REQUEUE_AFTER = timedelta(minutes=5)


@task("runs.sweep", "default", soft_time_limit=60, time_limit=90)
def sweep(self: Any) -> int:
    now = datetime.now(timezone.utc)
    deadline = now - timedelta(seconds=get_settings().run_heartbeat_timeout_s)
    with unit_of_work() as session:
        result = session.execute(
            update(Run)
            .where(Run.status == "running",
                   or_(Run.heartbeat_at < deadline, Run.heartbeat_at.is_(None) & (Run.started_at < deadline)))
            .values(status="failed", finished_at=now,
                    status_detail={"reason": "the runner stopped reporting (no heartbeat for "
                                             f"{get_settings().run_heartbeat_timeout_s} s); the load test "
                                             "was not restarted"})
            .returning(Run.id))
        failed = [row[0] for row in result]
        requeued = session.execute(
            update(Run).where(Run.status == "ingesting", Run.heartbeat_at < now - INGEST_REQUEUE_AFTER)
            .values(heartbeat_at=now).returning(Run.id)).scalars().all()
        for run_id in requeued:
            jobs.enqueue(session, "results.ingest", run_id)
    if failed:
        log.warning("swept stuck runs", run_ids=failed)
    if requeued:
        log.warning("re-queued ingests that never ran", run_ids=list(requeued))
    return len(failed) + len(requeued)

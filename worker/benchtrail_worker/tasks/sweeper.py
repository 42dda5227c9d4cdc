"""Beat's sweeper: nothing accepted stays stuck.

- A run whose runner stopped sending heartbeats is failed, never restarted.
- An ingest or an analysis that nobody is working on is queued again once `stage_requeue_after_s`
  has passed since it was queued (a worker killed mid-way, a job lost with the broker, retries that
  gave up while the database was down). "Nobody is working on it" is read from PostgreSQL itself:
  the ingest and analysis tasks hold their run's row lock for their whole transaction, and a dead
  worker's connection (and so its lock) is gone, so `FOR UPDATE SKIP LOCKED` sees the ones no worker
  holds. Of those, a run whose job is still waiting in the broker's queue (a backlog: uploads came
  faster than the workers ingest) is not lost and is left alone, so a backlog does not fill the queue
  with duplicates. Both tasks are idempotent (they lock the run and skip one already done), so a
  duplicate job does nothing and the cells are written exactly once.
- A resumable results upload that can never be committed (its run has other results or ended, or no
  chunk came for a week) loses its chunks and its row (uploads/results.py).
- A raw file an upload wrote to the store but never recorded (the upload failed and could not remove it,
  or its process died in between) is removed after an hour unless a run refers to it by then
  (uploads/service.py `remove_unrecorded`).
- The projects' change rows are folded into their counts (benchtrail/revisions.py), so reading a
  revision stays cheap however many writes came since.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from sqlalchemy import or_, select

from benchtrail import jobs, revisions
from benchtrail.config import get_settings
from benchtrail.db_boundary import unit_of_work
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail.runstate import lifecycle, shares
from benchtrail.uploads import results as results_uploads
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate.lifecycle import AnalysisStatus, RunStatus
from benchtrail.uploads import service as uploads
from benchtrail_worker.policy import task

BATCH = 200


def _overdue(*conditions: Any, before: datetime) -> tuple[Any, ...]:
    return (*conditions, or_(Run.heartbeat_at.is_(None), Run.heartbeat_at < before))


def _unattended(*conditions: Any, before: datetime) -> Any:
    return (select(Run).where(*_overdue(*conditions, before=before))
            .order_by(Run.id).limit(BATCH).with_for_update(skip_locked=True, key_share=True))


@task("runs.sweep", "default", soft_time_limit=60, time_limit=90)
def sweep(self: Any) -> int:
    settings = get_settings()
    now = datetime.now(timezone.utc)
    silent = now - timedelta(seconds=settings.run_heartbeat_timeout_s)
    lost = now - timedelta(seconds=settings.stage_requeue_after_s)
    with unit_of_work() as session:
        failed = []
        for run in session.scalars(select(Run).where(
                Run.status == RunStatus.RUNNING,
                or_(Run.heartbeat_at < silent, Run.heartbeat_at.is_(None) & (Run.started_at < silent)))
                .order_by(Run.id).limit(BATCH).with_for_update(skip_locked=True, key_share=True)):
            reason = (f"the runner stopped reporting (no heartbeat for {settings.run_heartbeat_timeout_s} s); "
                      "the load test was not restarted")
            rows = shares.of_run(session, run.id)
            if rows:  # a run over several generators: name the share(s) that went silent
                reason = shares.silent(run, rows, silent, settings.run_heartbeat_timeout_s,
                                       run_meta.of(run).pool or "default")
                shares.stop_live(rows, "cancelled", "stopped: another share of the run failed")
            lifecycle.transition(run, RunStatus.FAILED, now=now, detail={"reason": reason})
            failed.append(run.id)
        ingests = _requeue(session, "results.ingest", now, Run.status == RunStatus.INGESTING, before=lost)
        analyses = _requeue(session, "analysis.run", now, Run.status == RunStatus.COMPLETED,
                            Run.analysis_status == AnalysisStatus.PENDING, before=lost)
    with unit_of_work() as session:
        dropped = results_uploads.drop_abandoned(session, now)
    unrecorded = remove_unrecorded(now)
    with unit_of_work() as session:
        revisions.fold(session)
    if dropped:
        log.info("removed results uploads that can never be committed", uploads=dropped)
    if unrecorded:
        log.info("removed raw files no upload recorded", sha256=unrecorded)
    if failed:
        log.warning("swept stuck runs", run_ids=failed)
    if ingests:
        log.warning("re-queued ingests nobody was working on", run_ids=ingests)
    if analyses:
        log.warning("re-queued analyses nobody was working on", run_ids=analyses)
    return len(failed) + len(ingests) + len(analyses)


def remove_unrecorded(now: datetime) -> list[str]:
    """Remove the objects uploads wrote but never recorded an hour ago or more (uploads/service.py); their sha256.
    One transaction each: the content's lock is held only while its object goes."""
    with unit_of_work() as session:
        stale = uploads.unrecorded_before(session, now)
    removed = []
    for sha in stale:
        with unit_of_work() as session:
            if uploads.remove_unrecorded(session, sha, now):
                removed.append(sha)
    return removed


def _requeue(session: Any, task_name: str, now: datetime, *conditions: Any, before: datetime) -> list[int]:
    """Queue `task_name` again for each run matching `conditions` that nobody works on and whose job is
    not waiting in the broker's queue; returns their ids. The broker is asked only when some run is overdue,
    and before the rows are locked: a job a worker takes from the queue in between is seen in neither place
    and queued again, a harmless duplicate, never a lost one."""
    if session.scalar(select(Run.id).where(*_overdue(*conditions, before=before)).limit(1)) is None:
        return []
    queued = jobs.waiting(task_name)
    if queued is None:   # the broker cannot say (unreachable: nothing could be sent either; or a huge
        return []        # backlog, whose workers are busy): the next sweep looks again
    requeued = []
    for run in session.scalars(_unattended(*conditions, Run.id.not_in(queued), before=before)):
        run.heartbeat_at = now
        jobs.enqueue(session, task_name, run.id)
        requeued.append(run.id)
    return requeued

"""The life of a run of a plan, as driven by a runner: claim, progress (with heartbeat), results,
finish; and cancellation by a user. Every status change goes through runs/lifecycle.py (queued →
running → ingesting → completed, or failed / cancelled); each is guarded on the current state under
the run's row lock, so a load test can never be started twice for one run."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, BinaryIO

import redis
from pydantic import Field, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import Conflict, Forbidden, InvalidRequest, NotFound, Unauthorized
from benchtrail.logging import log
from benchtrail.models import Plan, Project, Run
from benchtrail.plans.schemas import FinishIn, ProgressIn
from benchtrail.runs import environments, lifecycle
from benchtrail.runs import meta as run_meta
from benchtrail.runs.meta import LoadgenStep
from benchtrail.runs import repository as runs_repository
from benchtrail.runs.lifecycle import RunStatus
from benchtrail.runs.service import get_visible_run
from benchtrail.uploads.schemas import UploadMetadata
from benchtrail.uploads.service import store_files

LOG_TAIL = 200
TERMINAL = tuple(s.value for s in lifecycle.TERMINAL)


class ResultsMetadata(UploadMetadata):
    """What a runner sends with its raw outputs: the files and its load generators' CPU per step.
    Criteria and validity are judged by ingest from the files and the run's plan, as for an upload."""

    loadgen: list[LoadgenStep] = Field(default_factory=list)


def channel(slug: str) -> str:
    return f"benchtrail:run:{slug}"


def publish_after_commit(session: Session, run: Run) -> None:
    payload = json.dumps(event_payload(run), default=str)
    slug = run.slug

    def send() -> None:
        client = redis.Redis.from_url(get_settings().redis_url, socket_timeout=2)
        try:
            client.publish(channel(slug), payload)
        except redis.RedisError as exc:
            # A missed live update is recovered by the next one, or by clients polling the run.
            log.warning("live run update not published", run=slug, error=str(exc))
        finally:
            client.close()

    session.info.setdefault("after_commit", []).append(send)


def event_payload(run: Run) -> dict[str, Any]:
    return {"slug": run.slug, "status": run.status, "progress": run.progress or {},
            "status_detail": run.status_detail, "is_valid": run.is_valid}


def _locked_run(session: Session, principal: Principal, slug: str, role: str) -> Run:
    run, project = get_visible_run(session, principal, slug)
    principal.require(project, role)
    locked = session.scalar(select(Run).where(Run.id == run.id).with_for_update())
    assert locked is not None
    return locked


def runner_run(session: Session, principal: Principal, slug: str, *, claiming: bool = False,
               lock: bool = True) -> Run:
    """The run, locked, for a runner endpoint: only a runner token gets it (never a project token),
    only for its pools when claiming, and afterwards only the runner token that claimed it."""
    if principal.is_anonymous:
        raise Unauthorized("claiming or reporting a run needs a runner token")
    run = runs_repository.get_by_slug(session, slug)
    project = session.get(Project, run.project_id) if run is not None else None
    if run is None or project is None or not (principal.is_runner or principal.can_see(project)):
        raise NotFound(f"run '{slug}' not found")
    if not principal.is_runner:
        raise Forbidden(f"token '{principal.name}' is not a runner token; only a runner token "
                        f"(benchtrail admin create-token --role runner) may claim or report a run")
    pool = run_meta.of(run).pool or "default"
    if claiming and not principal.may_claim(pool):
        raise Forbidden(f"runner token '{principal.name}' may claim runs of pools "
                        f"{', '.join(principal.pools or ())}; run '{slug}' is in pool '{pool}'")
    if not claiming and not principal.executes(run):
        raise Forbidden(f"run '{slug}' was not claimed by runner token '{principal.name}'; only the runner "
                        f"that claimed a run reports on it")
    if not lock:
        return run
    locked = session.scalar(select(Run).where(Run.id == run.id).with_for_update())
    assert locked is not None
    return locked


def claim(session: Session, principal: Principal, slug: str, runner: str) -> Run:
    run = runner_run(session, principal, slug, claiming=True)
    if run.status != RunStatus.QUEUED:
        raise Conflict(f"run '{slug}' is {run.status}; only a queued run can be started (never twice)")
    lifecycle.transition(run, RunStatus.RUNNING)
    run.progress = {"runner": runner, "percent": 0.0, "log": []}
    run_meta.update(run, runner_token_id=principal.token_id, runner_token=principal.name)
    publish_after_commit(session, run)
    return run


def plan_secrets(session: Session, run: Run) -> dict[str, dict[str, str]]:
    plan = session.get(Plan, run.plan_id) if run.plan_id is not None else None
    return dict(plan.secrets or {}) if plan is not None else {}


def progress(session: Session, principal: Principal, slug: str, data: ProgressIn) -> bool:
    """Store a progress report (it is also the runner's heartbeat); answer whether to cancel."""
    run = runner_run(session, principal, slug)
    if run.status != RunStatus.RUNNING:
        return True  # nothing to run any more: the runner must stop
    current = dict(run.progress or {})
    update = data.model_dump(exclude_none=True, exclude={"log"})
    current.update(update)
    current["log"] = (list(current.get("log", [])) + data.log)[-LOG_TAIL:]
    run.progress = current
    run.heartbeat_at = datetime.now(timezone.utc)
    publish_after_commit(session, run)
    return run_meta.of(run).cancel_requested


def attach_results(session: Session, principal: Principal, slug: str, metadata_raw: str,
                   parts: list[tuple[str, BinaryIO]], idempotency_key: str | None = None) -> tuple[Run, bool]:
    """Store a runner's results (all files or none: one transaction). With the Idempotency-Key of
    results already accepted, nothing is stored and the answer says `duplicate` (the runner retried
    after losing the first answer). Concurrent retries queue on the run's row lock."""
    run = runner_run(session, principal, slug)
    if idempotency_key is not None and run.results_key == idempotency_key:
        return run, True
    late = run.status == RunStatus.FAILED and run.results_key is None
    if run.status != RunStatus.RUNNING and not late:
        raise Conflict(f"run '{slug}' is {run.status}; results are accepted only from the runner that runs it "
                       f"(or, once, late from that runner after the run failed without results)")
    try:
        meta = ResultsMetadata.model_validate_json(metadata_raw)
    except ValidationError as exc:
        raise InvalidRequest(f"metadata: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from None
    if run.environment_id is None and meta.environment is not None:
        run.environment_id = environments.get_or_create(session, run.project_id, meta.environment).id
    run_meta.update(run, loadgen=meta.loadgen)
    if late:
        # The load test finished but its runner lost the API while delivering it (the sweeper or the
        # runner itself failed the run): its results still count. Recorded in the status detail.
        earlier = (run.status_detail or {}).get("reason", "")
        lifecycle.transition(run, RunStatus.INGESTING, detail={
            "reason": f"results delivered late by the runner after the run had failed ({earlier})"})
    store_files(session, run, meta, parts)
    # No key: a placeholder still marks the run as having results (late results are accepted once).
    run.results_key = idempotency_key or f"unkeyed-{run.id}"
    run.progress = {**(run.progress or {}), "percent": 100.0, "step": "ingesting"}
    publish_after_commit(session, run)
    return run, False


def finish(session: Session, principal: Principal, slug: str, data: FinishIn) -> Run:
    run = runner_run(session, principal, slug)
    if run.status in TERMINAL:
        return run
    if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
        raise Conflict(f"run '{slug}' is {run.status}")
    lifecycle.transition(run, RunStatus(data.status), detail={"reason": data.reason})
    publish_after_commit(session, run)
    return run


def cancel(session: Session, principal: Principal, slug: str) -> Run:
    """A queued run is cancelled at once; a running one is asked to stop (its runner kills the tools
    and reports `cancelled`, and no results are ingested)."""
    run = _locked_run(session, principal, slug, "uploader")
    if run.status == RunStatus.QUEUED:
        lifecycle.transition(run, RunStatus.CANCELLED,
                             detail={"reason": f"cancelled by {principal.name} before it started"})
    elif run.status == RunStatus.RUNNING:
        run_meta.update(run, cancel_requested=True, cancelled_by=principal.name)
    else:
        raise Conflict(f"run '{slug}' is {run.status}; only queued or running runs can be cancelled")
    publish_after_commit(session, run)
    return run



"""The life of a run of a plan, as driven by a runner: claim, progress (with heartbeat), finish; and
cancellation by a user. Every status change goes through runstate/lifecycle.py (queued → running →
ingesting → completed, or failed / cancelled); each is guarded on the current state under the run's row
lock, so a load test can never be started twice for one run. A runner's results are recorded by
uploads/results.py, which asks `reporting_run` whether this runner may report on the run."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal
from benchtrail.errors import Conflict, ErrorCode, Forbidden, InvalidRequest, NotFound, Unauthorized
from benchtrail.models import Plan, Project, Run, RunShare
from benchtrail.plans.schemas import FinishIn, ProgressIn
from benchtrail.runstate import access, lifecycle, shares
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate.lifecycle import RunStatus

LOG_TAIL = 200
TERMINAL = tuple(s.value for s in lifecycle.TERMINAL)


def runner_run(session: Session, principal: Principal, slug: str, *, claiming: bool = False,
               lock: bool = True) -> Run:
    """The run, locked, for a runner endpoint: only a runner token gets it (never a project token),
    only for its pools when claiming, and afterwards only the runner token that claimed it."""
    if principal.is_anonymous:
        raise Unauthorized("claiming or reporting a run needs a runner token", code=ErrorCode.RUNNER_TOKEN_REQUIRED)
    run = access.by_slug(session, slug)
    project = session.get(Project, run.project_id) if run is not None else None
    if run is None or project is None or not (principal.is_runner or principal.can_see(project)):
        raise NotFound(f"run '{slug}' not found")
    if not principal.is_runner:
        raise Forbidden(f"token '{principal.name}' is not a runner token; only a runner token "
                        f"(benchtrail admin create-token --role runner) may claim or report a run", code=ErrorCode.NOT_A_RUNNER_TOKEN)
    pool = run_meta.of(run).pool or "default"
    if claiming and not principal.may_claim(pool):
        raise Forbidden(f"runner token '{principal.name}' may claim runs of pools "
                        f"{', '.join(principal.pools or ())}; run '{slug}' is in pool '{pool}'", code=ErrorCode.POOL_NOT_ALLOWED)
    if not claiming and not access.executes(principal, run):
        raise Forbidden(f"run '{slug}' was not claimed by runner token '{principal.name}'; only the runner "
                        f"that claimed a run reports on it", code=ErrorCode.NOT_CLAIMED_BY_TOKEN)
    if not lock:
        return run
    locked = access.lock(session, run.id)
    assert locked is not None
    return locked


def _share(session: Session, run: Run, share: int | None, principal: Principal | None = None
           ) -> tuple[RunShare | None, list[RunShare]]:
    """The share a runner names (and every share of the run), for a run of several generators; a run
    of one generator has none and takes no `share`."""
    generators = run_meta.of(run).generators
    if generators == 1:
        if share is not None:
            raise InvalidRequest(f"share: run '{run.slug}' runs on one generator; it has no shares", code=ErrorCode.SHARE_NOT_SPLIT)
        return None, []
    if share is None or not 0 <= share < generators:
        raise InvalidRequest(f"share: run '{run.slug}' is split into {generators} shares; name one of "
                             f"0..{generators - 1} (?share=)", code=ErrorCode.SHARE_REQUIRED)
    rows = shares.of_run(session, run.id)
    row = rows[share]
    if principal is not None and row.runner_token_id != principal.token_id:
        raise Forbidden(f"share {share + 1} of run '{run.slug}' was not claimed by runner token "
                        f"'{principal.name}'; only the runner that claimed a share reports on it", code=ErrorCode.NOT_CLAIMED_BY_TOKEN)
    return row, rows


def reporting_run(session: Session, principal: Principal, slug: str, share: int | None, *,
                  lock: bool = True) -> Run:
    """The run a runner reports on: a run of one generator (share None) that this runner token claimed,
    or one share of a run over several generators that this runner token claimed."""
    run = runner_run(session, principal, slug, claiming=share is not None, lock=lock)
    _share(session, run, share, principal)
    return run


def claim(session: Session, principal: Principal, slug: str, runner: str, share: int | None = None,
          host: str | None = None) -> Run:
    run = runner_run(session, principal, slug, claiming=True)
    row, rows = _share(session, run, share)
    if row is not None:
        return _claim_share(session, principal, run, row, rows, runner, host)
    if run.status != RunStatus.QUEUED:
        raise Conflict(f"run '{slug}' is {run.status}; only a queued run can be started (never twice)", code=ErrorCode.RUN_NOT_QUEUED)
    lifecycle.transition(run, RunStatus.RUNNING)
    run.progress = {"runner": runner, "percent": 0.0, "log": []}
    run_meta.update(run, runner_token_id=principal.token_id, runner_token=principal.name)
    return run


def _claim_share(session: Session, principal: Principal, run: Run, row: RunShare, rows: list[RunShare],
                 runner: str, host: str | None) -> Run:
    total = len(rows)
    if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING) or row.status != "queued":
        raise Conflict(f"share {row.index + 1} of {total} of run '{run.slug}' is "
                       f"{row.status if run.status in (RunStatus.QUEUED, RunStatus.RUNNING) else run.status}; "
                       f"only a queued share can be started (never twice)", code=ErrorCode.SHARE_NOT_QUEUED)
    mine = next((s for s in rows if s.runner == runner and s.status != "queued"), None)
    if mine is not None:
        raise Conflict(f"runner '{runner}' already runs share {mine.index + 1} of {total} of run '{run.slug}'; "
                       f"each share needs its own runner", code=ErrorCode.SAME_RUNNER)
    now = datetime.now(timezone.utc)
    if run.status == RunStatus.QUEUED:
        lifecycle.transition(run, RunStatus.RUNNING, now=now)
        run.progress = {"runner": runner, "percent": 0.0, "log": []}
        run_meta.update(run, runner_token_id=principal.token_id, runner_token=principal.name)
    row.status, row.runner, row.host, row.runner_token_id = "running", runner, host, principal.token_id
    row.claimed_at = row.heartbeat_at = now
    run.progress = {**(run.progress or {}), "log": (list((run.progress or {}).get("log", [])) + [
        f"share {row.index + 1} of {total} claimed by runner '{runner}' on host '{host}'"])[-LOG_TAIL:]}
    shares.arm_barrier(run, rows, now)
    shares.refresh_heartbeat(run, rows)
    return run


def start_at(run: Run) -> datetime | None:
    value = run_meta.of(run).start_at
    return datetime.fromisoformat(value) if value else None


def plan_secrets(session: Session, run: Run) -> dict[str, dict[str, str]]:
    plan = session.get(Plan, run.plan_id) if run.plan_id is not None else None
    return dict(plan.secrets or {}) if plan is not None else {}


def progress(session: Session, principal: Principal, slug: str, data: ProgressIn,
             share: int | None = None) -> tuple[bool, Run]:
    """Store a progress report (it is also the runner's heartbeat); answer whether to cancel."""
    run = runner_run(session, principal, slug, claiming=share is not None)
    row, rows = _share(session, run, share, principal)
    if run.status != RunStatus.RUNNING or (row is not None and row.status != "running"):
        return True, run  # nothing to run any more: the runner must stop
    if row is not None:
        return _share_progress(session, run, row, rows, data), run
    current = dict(run.progress or {})
    update = data.model_dump(exclude_none=True, exclude={"log"})
    current.update(update)
    current["log"] = (list(current.get("log", [])) + data.log)[-LOG_TAIL:]
    run.progress = current
    run.heartbeat_at = datetime.now(timezone.utc)
    return run_meta.of(run).cancel_requested, run


def _share_progress(session: Session, run: Run, row: RunShare, rows: list[RunShare], data: ProgressIn) -> bool:
    """A share's report: its heartbeat, its progress under `progress.shares`, its log lines marked with
    the share; the run's own percent is the slowest share's."""
    row.heartbeat_at = datetime.now(timezone.utc)
    current = dict(run.progress or {})
    per = dict(current.get("shares") or {})
    per[str(row.index)] = {**per.get(str(row.index), {}), **data.model_dump(exclude_none=True, exclude={"log"})}
    current["shares"] = per
    for key in ("step", "step_index", "steps_total"):
        if key in per.get("0", {}):
            current[key] = per["0"][key]
    percents = [per.get(str(s.index), {}).get("percent", 0.0) for s in rows]
    current["percent"] = min(percents)
    for key in ("requests", "errors", "achieved_rate"):
        values = [p[key] for p in per.values() if p.get(key) is not None]
        if values:
            current[key] = sum(values)
    current["log"] = (list(current.get("log", [])) + [f"[share {row.index + 1}] {line}" for line in data.log]
                      )[-LOG_TAIL:]
    run.progress = current
    if data.ready_step is not None:
        shares.arm_step(run, rows, per, data.ready_step, datetime.now(timezone.utc))
    shares.refresh_heartbeat(run, rows)
    return run_meta.of(run).cancel_requested


def finish(session: Session, principal: Principal, slug: str, data: FinishIn, share: int | None = None) -> Run:
    run = runner_run(session, principal, slug, claiming=share is not None)
    row, rows = _share(session, run, share, principal)
    if row is not None:
        if row.status in ("queued", "running"):
            row.status, row.reason, row.finished_at = data.status, data.reason, datetime.now(timezone.utc)
        if run.status in TERMINAL or run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
            return run
        # A share that fails (or stops) fails the whole run: the others are told to stop by their next heartbeat.
        status = RunStatus.CANCELLED if data.status == "cancelled" and run_meta.of(run).cancel_requested \
            else RunStatus.FAILED
        shares.stop_live(rows, "cancelled", f"stopped: {shares.name(row, len(rows))} ended the run")
        lifecycle.transition(run, status, detail={"reason": f"{shares.name(row, len(rows))} {data.status}: "
                                                            f"{data.reason}"})
        return run
    if run.status in TERMINAL:
        return run
    if run.status not in (RunStatus.QUEUED, RunStatus.RUNNING):
        raise Conflict(f"run '{slug}' is {run.status}", code=ErrorCode.RUN_NOT_RUNNING)
    lifecycle.transition(run, RunStatus(data.status), detail={"reason": data.reason})
    return run


def cancel(session: Session, principal: Principal, slug: str) -> Run:
    """A queued run is cancelled at once; a running one is asked to stop (its runner kills the tools
    and reports `cancelled`, and no results are ingested)."""
    run = access.locked_run(session, principal, slug, "uploader")
    if run.status == RunStatus.QUEUED:
        lifecycle.transition(run, RunStatus.CANCELLED,
                             detail={"reason": f"cancelled by {principal.name} before it started"})
        shares.stop_live(shares.of_run(session, run.id), "cancelled", f"cancelled by {principal.name}")
    elif run.status == RunStatus.RUNNING:
        run_meta.update(run, cancel_requested=True, cancelled_by=principal.name)
    else:
        raise Conflict(f"run '{slug}' is {run.status}; only queued or running runs can be cancelled", code=ErrorCode.RUN_NOT_CANCELLABLE)
    return run

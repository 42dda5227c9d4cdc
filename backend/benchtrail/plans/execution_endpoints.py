"""The runner's side of a plan run over HTTP (runner tokens): claim, progress (the heartbeat), finish; and a
user's cancel. The results a runner sends are received by uploads (uploads/results_endpoints.py)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal

from benchtrail.auth.dependencies import get_principal
from benchtrail.db_boundary import request_session
from benchtrail.openapi import errors
from benchtrail.plans import execution as service
from benchtrail.plans.schemas import ClaimOut, FinishIn, ProgressAck, ProgressIn
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate import shares

router = APIRouter(prefix="/api/v1/runs", tags=["execution"])
SessionDep = Depends(request_session, scope="function")
ShareQuery = Query(default=None, ge=0, le=63, description="The share (0-based) of a run over several generators")


@router.post("/{slug}/claim", response_model=ClaimOut, responses=errors(403, 409))
def claim(slug: str, runner: str = Query(default="runner", min_length=1, max_length=200),
          host: str | None = Query(default=None, min_length=1, max_length=200, description="The runner's host name"),
          share: int | None = ShareQuery,
          session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> ClaimOut:
    """A runner token takes a queued run of one of its pools (or, for a run over several generators, one
    queued share of it); 409 if it is not queued any more (never started twice). The answer carries the
    plan's request headers, which no other endpoint shows."""
    run = service.claim(session, principal, slug, runner, share, host)
    return ClaimOut(cancel_requested=False, headers=service.plan_secrets(session, run),
                    generators=run_meta.of(run).generators, share=share, start_at=service.start_at(run))


@router.post("/{slug}/progress", response_model=ProgressAck, responses=errors(403))
def report_progress(slug: str, body: ProgressIn, share: int | None = ShareQuery,
                    session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> ProgressAck:
    """A runner's progress report, every second (runner token): step, percent, achieved rate, errors, log tail.
    It is also the run's heartbeat; the answer says whether a cancel was requested (`cancel_requested`) and, for a
    run over several generators, the start barrier (`start_at`, `step_start_at`)."""
    cancel, run = service.progress(session, principal, slug, body, share)
    return ProgressAck(cancel_requested=cancel, start_at=service.start_at(run),
                       step_start_at=shares.step_start(run, body.ready_step))


@router.post("/{slug}/finish", responses=errors(403, 409))
def finish(slug: str, body: FinishIn, share: int | None = ShareQuery,
           session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> dict[str, str]:
    """A runner ends the run (or its share) it claimed: failed or cancelled, with a reason (runner token)."""
    run = service.finish(session, principal, slug, body, share)
    return {"run": run.slug, "status": run.status}


@router.post("/{slug}/cancel", responses=errors(403, 409))
def cancel(slug: str, session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> dict[str, str]:
    """Cancel a queued or running run (uploader token): its runner stops the tools within seconds. 409 for a run in
    another state; a load test already finished (being packaged or uploaded) is delivered all the same."""
    run = service.cancel(session, principal, slug)
    return {"run": run.slug, "status": run.status}

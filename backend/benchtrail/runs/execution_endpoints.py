from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import redis.asyncio as aioredis
from fastapi import APIRouter, Depends, File, Form, Header, Query, Request, UploadFile
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal, bearer_token, get_principal, resolve
from benchtrail.config import get_settings
from benchtrail.db_boundary import request_session, unit_of_work
from benchtrail.openapi import RESULT_FILE_400, ResultFileError, errors
from benchtrail.plans.schemas import ClaimOut, FinishIn, ProgressAck, ProgressIn, ResultsAccepted
from benchtrail.runs import execution as service
from benchtrail.runs import meta as run_meta
from benchtrail.runs import shares
from benchtrail.runs.service import get_visible_run

router = APIRouter(prefix="/api/v1/runs", tags=["execution"])
# One server-sent event: `data` is the run's state as JSON (keep-alive comments carry no event).
RUN_EVENT = {"type": "object", "required": ["data"], "properties": {
    "event": {"type": "string", "enum": ["message"]},
    "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": {
        "type": "object", "required": ["slug", "status", "progress", "status_detail", "is_valid"], "properties": {
            "slug": {"type": "string"}, "status": {"type": "string"}, "progress": {"type": "object"},
            "status_detail": {"type": ["object", "null"]}, "is_valid": {"type": "boolean"}}}}}}
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
    cancel, run = service.progress(session, principal, slug, body, share)
    return ProgressAck(cancel_requested=cancel, start_at=service.start_at(run),
                       step_start_at=shares.step_start(run, body.ready_step))


@router.post("/{slug}/results", response_model=ResultsAccepted, status_code=202,
             responses={200: {"model": ResultsAccepted,
                              "description": "Same Idempotency-Key: these results were already accepted"},
                        **errors(400, model=ResultFileError, e400=RESULT_FILE_400), **errors(403, 409),
                        **errors(413, e413="Upload too large (checked before it is read) or a decompression bomb")})
def upload_results(slug: str,
                   metadata: str = Form(description="ResultsMetadata as JSON; files[i] describes the i-th file"),
                   files: list[UploadFile] = File(description="Raw outputs (may be gzip/zstd/zip)"),
                   idempotency_key: str | None = Header(
                       default=None, max_length=200, pattern=r"^[\x21-\x7e]+$",
                       description="The runner's key for these results: sent again (a retry whose answer was "
                                   "lost), the results are not stored twice and the answer is 200"),
                   share: int | None = ShareQuery,
                   session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> JSONResponse:
    """A runner's raw outputs for the run it claimed, validated and stored in one transaction (all or
    nothing), then ingested."""
    run, duplicate = service.attach_results(session, principal, slug, metadata,
                                            [(f.filename or f"file-{i}", f.file) for i, f in enumerate(files)],
                                            idempotency_key, share)
    body = ResultsAccepted(run=run.slug, status=run.status, duplicate=duplicate)
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if duplicate else 202)


@router.post("/{slug}/finish", responses=errors(403, 409))
def finish(slug: str, body: FinishIn, share: int | None = ShareQuery,
           session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> dict[str, str]:
    run = service.finish(session, principal, slug, body, share)
    return {"run": run.slug, "status": run.status}


@router.post("/{slug}/cancel", responses=errors(403, 409))
def cancel(slug: str, session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> dict[str, str]:
    run = service.cancel(session, principal, slug)
    return {"run": run.slug, "status": run.status}


@router.get("/{slug}/events", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {"schema": RUN_EVENT}},
                             "description": "run state, then every change"}} | errors(401))
async def events(slug: str, request: Request) -> StreamingResponse:
    """Server-sent events: the run's status and progress now, then on every change, until it ends."""
    token = bearer_token(request)

    def current() -> dict:
        with unit_of_work() as session:
            run, _ = get_visible_run(session, resolve(session, token), slug)
            return service.event_payload(run)

    first = await run_in_threadpool(current)

    async def stream() -> AsyncIterator[str]:
        yield f"data: {json.dumps(first, default=str)}\n\n"
        if first["status"] in service.TERMINAL:
            return
        client = aioredis.Redis.from_url(get_settings().redis_url)
        pubsub = client.pubsub()
        await pubsub.subscribe(service.channel(slug))
        try:
            while not await request.is_disconnected():
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=15.0)
                if message is None:
                    yield ": keep-alive\n\n"
                    continue
                data = message["data"].decode()
                yield f"data: {data}\n\n"
                if json.loads(data)["status"] in service.TERMINAL:
                    return
                await asyncio.sleep(0)
        finally:
            await pubsub.unsubscribe()
            await pubsub.aclose()
            await client.aclose()

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

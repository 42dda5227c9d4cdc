from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path as PathLib

import redis.asyncio as aioredis
from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.requests import ClientDisconnect
from sqlalchemy.orm import Session

from benchtrail import storage
from benchtrail.auth.principal import Principal, TokenDep, bearer_token, get_principal, resolve
from benchtrail.config import get_settings
from benchtrail.db_boundary import request_session, unit_of_work
from benchtrail.openapi import RESULT_FILE_400, ResultFileError, errors
from benchtrail.errors import ErrorCode, InvalidRequest, NotFound, PayloadTooLarge
from benchtrail.logging import log
from benchtrail.plans.schemas import (ClaimOut, FinishIn, ProgressAck, ProgressIn, ResultsAccepted, ResultsUploadIn,
                                     ResultsUploadOut)
from benchtrail.runs import events as run_events
from benchtrail.runs import execution as service
from benchtrail.runs import meta as run_meta
from benchtrail.runs import results_uploads as uploads
from benchtrail.runs import shares
from benchtrail.runs.service import get_visible_run
from benchtrail.uploads.form import Form, form_body, with_form
from benchtrail.uploads.service import KeptFiles

router = APIRouter(prefix="/api/v1/runs", tags=["execution"])
# One server-sent event: `data` is the run's state as JSON (keep-alive comments carry no event).
RUN_EVENT = {"type": "object", "required": ["data"], "properties": {
    "event": {"type": "string", "enum": ["message"]},
    "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": {
        "type": "object", "required": ["slug", "status", "analysis_status", "progress", "status_detail", "is_valid"],
        "properties": {
            "slug": {"type": "string"}, "status": {"type": "string"},
            "analysis_status": {"type": "string", "enum": ["pending", "done", "failed"]},
            "progress": {"type": "object"}, "status_detail": {"type": ["object", "null"]},
            "is_valid": {"type": "boolean"}}}}}}
# A stream that has heard nothing for this long reads the run again (a publish lost while Redis was
# away is then late, not missing).
QUIET_S = 5.0
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


@router.post("/{slug}/results", response_model=ResultsAccepted, status_code=202,
             openapi_extra={"requestBody": form_body(service.ResultsMetadata, "files[i] describes the i-th file",
                                                     "Raw outputs (may be gzip/zstd/zip)")},
             responses={200: {"model": ResultsAccepted,
                              "description": "Same Idempotency-Key: these results were already accepted"},
                        **errors(400, model=ResultFileError, e400=RESULT_FILE_400), **errors(403, 409),
                        **errors(413, e413="Upload too large (checked before it is read) or a decompression bomb")})
async def upload_results(request: Request, slug: str, token: str | None = TokenDep,
                         idempotency_key: str | None = Header(
                             default=None, max_length=200, pattern=r"^[\x21-\x7e]+$",
                             description="The runner's key for these results: sent again (a retry whose answer "
                                         "was lost), the results are not stored twice and the answer is 200"),
                         share: int | None = ShareQuery) -> JSONResponse:
    """A runner's raw outputs for the run it claimed, checked and stored, then recorded in one transaction
    (all or nothing) and ingested. Each file is written once, as it arrives (`uploads.form`)."""
    def check() -> None:   # not a runner, or not its run: answered before the body is read
        with unit_of_work() as session:
            service.reporting_run(session, resolve(session, token), slug, share, lock=False)

    await run_in_threadpool(check)

    def attach(form: Form) -> tuple[str, str, bool]:
        meta = service.parse_results_metadata(form.text("metadata", "ResultsMetadata as JSON"))
        with KeptFiles(meta.files, form.files.get("files", [])) as kept, unit_of_work() as session:
            run, duplicate = service.attach_results(session, resolve(session, token), slug, meta, kept,
                                                    idempotency_key, share)
            return run.slug, run.status, duplicate

    run_slug, status, duplicate = await with_form(request, attach)
    body = ResultsAccepted(run=run_slug, status=status, duplicate=duplicate)
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if duplicate else 202)


UPLOAD_ID = Path(pattern="^[0-9a-f]{32}$", description="The upload session's id (from POST .../results/uploads)")
UPLOAD_409 = ("The run does not accept results (not running, or it has other results); for a chunk: it starts "
              "past the server's offset (the body's `offset` says where to resume); for a commit: bytes are "
              "missing (`offset`)")
IDEMPOTENCY_KEY = Header(max_length=200, pattern=r"^[\x21-\x7e]+$",
                         description="The runner's key for these results: the same key opens the same session "
                                     "again (with its offset), and its results are committed once")


@router.post("/{slug}/results/uploads", response_model=ResultsUploadOut, status_code=201,
             responses={200: {"model": ResultsUploadOut,
                              "description": "Same Idempotency-Key: the existing session, with its offset"},
                        **errors(403), **errors(409, e409=UPLOAD_409),
                        **errors(413, e413="The body exceeds BENCHTRAIL_MAX_UPLOAD_MB, or a declared file does")})
def open_results_upload(slug: str, body: ResultsUploadIn, idempotency_key: str = IDEMPOTENCY_KEY,
                        share: int | None = ShareQuery, session: Session = SessionDep,
                        principal: Principal = Depends(get_principal)) -> JSONResponse:
    """Open a resumable results upload (a runner token, for the run it claimed): the package (the files'
    bytes one after the other) is then sent in chunks with PATCH and stored with POST .../commit."""
    out, created = uploads.open_upload(session, principal, slug, body, idempotency_key, share)
    return JSONResponse(out.model_dump(mode="json"), status_code=201 if created else 200)


@router.get("/{slug}/results/uploads/{upload_id}", response_model=ResultsUploadOut, responses=errors(403))
def results_upload_status(slug: str, upload_id: str = UPLOAD_ID, share: int | None = ShareQuery,
                          session: Session = SessionDep, principal: Principal = Depends(get_principal)
                          ) -> ResultsUploadOut:
    """The session's offset: how many bytes of the package the server holds (resume from there)."""
    return uploads.status(session, principal, slug, upload_id, share)


@router.patch("/{slug}/results/uploads/{upload_id}", response_model=ResultsUploadOut,
              responses={**errors(401, 403), **errors(409, e409=UPLOAD_409),
                         **errors(413, e413="The chunk exceeds BENCHTRAIL_MAX_UPLOAD_MB or 64 MB")},
              openapi_extra={"requestBody": {"required": True, "description": "The chunk's bytes", "content": {
                  "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}})
async def results_upload_chunk(request: Request, slug: str, upload_id: str = UPLOAD_ID,
                               offset: int = Query(ge=0, le=2**53, description="Where the chunk starts in the "
                                                   "package; bytes the server holds already are skipped"),
                               share: int | None = ShareQuery) -> ResultsUploadOut:
    """One chunk of the package. Idempotent: a chunk sent again changes nothing; one past the server's
    offset is refused (409) with the offset to resume from."""
    token = bearer_token(request)
    limit = uploads.chunk_limit()
    scratch = storage.scratch_dir()
    fd, name = tempfile.mkstemp(prefix="chunk-", dir=scratch)
    path = PathLib(name)
    try:
        with os.fdopen(fd, "wb") as out:
            size = 0
            try:
                async for data in request.stream():
                    size += len(data)
                    if size > limit:
                        raise PayloadTooLarge(f"a results chunk is at most {limit} bytes")
                    out.write(data)
            except ClientDisconnect:  # a cut connection: nothing of the chunk is kept, the offset stays
                raise InvalidRequest("the chunk was cut off before its end; nothing of it was kept", code=ErrorCode.UPLOAD_CUT_OFF) from None

        return await run_in_threadpool(uploads.add_chunk, token, slug, upload_id, offset, path, share)
    finally:
        path.unlink(missing_ok=True)


@router.post("/{slug}/results/uploads/{upload_id}/commit", response_model=ResultsAccepted, status_code=202,
             responses={200: {"model": ResultsAccepted,
                              "description": "Already committed (same Idempotency-Key): nothing new was stored"},
                        **errors(400, model=ResultFileError, e400=RESULT_FILE_400 + "; or a file's sha256 differs"),
                        **errors(403), **errors(409, e409=UPLOAD_409),
                        **errors(413, e413="A decompression bomb")})
def commit_results_upload(slug: str, upload_id: str = UPLOAD_ID, share: int | None = ShareQuery,
                          token: str | None = TokenDep) -> JSONResponse:
    """Store the complete package as the run's results (as POST .../results does: all files or none,
    then ingested), exactly once."""
    body = uploads.commit(token, slug, upload_id, share)
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if body.duplicate else 202)


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


@router.get("/{slug}/events", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {"schema": RUN_EVENT}},
                             "description": "run state, then every change"}} | errors(401))
async def events(slug: str, request: Request) -> StreamingResponse:
    """Server-sent events: the run's state now, then on every change, until it ends (a completed run:
    until its analysis is done or failed, when its alerts exist)."""
    token = bearer_token(request)

    def current() -> dict:
        with unit_of_work() as session:
            run, _ = get_visible_run(session, resolve(session, token), slug)
            return run_events.event_payload(run)

    # Subscribed before the state is read: a change committed in between is then both in the state
    # and on the channel (sent twice at worst), never in neither, which would leave the stream silent.
    client = aioredis.Redis.from_url(get_settings().redis_url)
    pubsub = client.pubsub()

    async def close() -> None:
        await pubsub.aclose()   # its connection closed, the subscription ends with it (no command sent)
        await client.aclose()

    try:
        await pubsub.subscribe(run_events.channel(slug))
        first = await run_in_threadpool(current)
    except BaseException:
        await close()
        raise

    async def stream() -> AsyncIterator[str]:
        state = first
        try:
            yield f"data: {json.dumps(state, default=str)}\n\n"
            while not run_events.is_last(state) and not await request.is_disconnected():
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=QUIET_S)
                if message is not None:
                    state = json.loads(message["data"])
                else:
                    try:
                        read = await run_in_threadpool(current)
                    except NotFound:    # deleted meanwhile: nothing more will happen to it
                        return
                    except Exception as exc:  # database away: Redis may still bring the next change
                        log.warning("run events: the run could not be read again", run=slug, error=str(exc)[:300])
                        read = state
                    if read == state:
                        yield ": keep-alive\n\n"
                        continue
                    state = read
                yield f"data: {json.dumps(state, default=str)}\n\n"
        finally:
            await close()

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

import redis.asyncio as aioredis
from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import Field, StringConstraints
from sqlalchemy.orm import Session

from benchtrail import storage
from benchtrail.auth.principal import Principal, resolve
from benchtrail.auth.dependencies import TokenDep, bearer_token, get_principal
from benchtrail.config import get_settings
from benchtrail.db_boundary import request_session, unit_of_work
from benchtrail.errors import NotFound, ServiceUnavailable
from benchtrail.http_cache import NOT_MODIFIED, remembered_read
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail.openapi import ID, errors
from benchtrail.projects import service as projects
from benchtrail.runs import exclusion, repository, service
from benchtrail.runstate import events as run_events
from benchtrail.runstate.access import get_visible_run
from benchtrail.runs.schemas import BmfOut, ExclusionIn, ExclusionOut, PercentilesOut, RunDetail, RunPage, SeriesList

router = APIRouter(prefix="/api/v1", tags=["runs"])
LABEL = r"^[^:]*:"  # key:value; the key is what precedes the first colon
SessionDep = Depends(request_session, scope="function")


@router.get("/projects/{slug}/runs", response_model=RunPage, responses=NOT_MODIFIED)
async def list_runs(slug: str, request: Request, environment: str | None = None, agent_version: str | None = None,
                    branch: str | None = None, status: str | None = None,
                    label: list[Annotated[str, StringConstraints(pattern=LABEL)]] = Query(
                        default=[], description="key:value (the first colon splits), repeatable; every one must match"),
                    page: int = Query(default=1, ge=1, le=1_000_000), per_page: int = Query(default=50, ge=1, le=500),
                    cursor: str | None = Query(default=None, pattern=service.CURSOR,
                                               description="`next_cursor` of the previous page: keyset pagination, as "
                                                           "fast at the 100th page as at the first (`page` is then "
                                                           "ignored)"),
                    token: str | None = TokenDep) -> Response:
    """Runs, newest first."""
    def build(session: Session, principal: Principal) -> RunPage:
        return service.list_runs(session, principal, slug, environment=environment, agent_version=agent_version,
                                 branch=branch, status=status, labels=label, page=page, per_page=per_page,
                                 cursor=cursor)

    return await remembered_read(request, token, projects.head(slug), build)


@router.get("/runs/{slug}", response_model=RunDetail, responses=NOT_MODIFIED)
async def get_run(slug: str, request: Request, token: str | None = TokenDep) -> Response:
    """The run document. Answers carry an ETag; send it back in If-None-Match to get 304."""
    return await remembered_read(request, token, service.head(slug),
                                 lambda session, principal: service.detail(session, principal, slug)[0])


@router.get("/runs/{slug}/bmf", response_model=BmfOut, responses=NOT_MODIFIED)
async def get_run_bmf(slug: str, request: Request, token: str | None = TokenDep) -> Response:
    """The run's cells as Bencher Metric Format (BMF) JSON, what `bencher run --adapter json` reads
    (docs/how-to/formats.md, 'BMF out'): `{benchmark: {measure: {value, lower_value?, upper_value?}}}`."""
    from benchtrail.runs.bmf import run_bmf

    return await remembered_read(request, token, service.head(slug), lambda session, principal: BmfOut(
        run_bmf(service.detail(session, principal, slug)[0])))


_NOT_COMPLETED = "The run is not completed: only a completed run has points in trails"


@router.put("/runs/{slug}/exclusion", response_model=ExclusionOut, responses=errors(403, 409, e409=_NOT_COMPLETED))
def exclude_run(slug: str, body: ExclusionIn, session: Session = SessionDep,
                principal: Principal = Depends(get_principal)) -> ExclusionOut:
    """Exclude a completed run from its trails (uploader token): it stays, marked invalid with who excluded
    it and why, its points leave its trails and it never alerts; its trails are judged again around it
    (`analysis_status` pending until then), which withdraws or moves the alerts it raised. Sending it
    again with another reason replaces the reason."""
    return _exclusion_out(exclusion.set_excluded(session, principal, slug, body.reason.strip()))


@router.delete("/runs/{slug}/exclusion", response_model=ExclusionOut, responses=errors(403, 409, e409=_NOT_COMPLETED))
def restore_run(slug: str, session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> ExclusionOut:
    """Restore an excluded run (uploader token): its own checks decide its validity again and its trails are
    judged again around it. A run that is not excluded is answered as it is."""
    return _exclusion_out(exclusion.set_excluded(session, principal, slug, None))


def _exclusion_out(run: Run) -> ExclusionOut:
    row = exclusion.exclusion(run)
    return ExclusionOut(run=run.slug, excluded=row is not None, reason=row and row.get("reason"),
                        by=row and row.get("by"), is_valid=run.is_valid, analysis_status=run.analysis_status)


@router.get("/runs/{slug}/series", response_model=SeriesList, responses=NOT_MODIFIED)
async def get_series(slug: str, request: Request, metric: str | None = None,
                     token: str | None = TokenDep) -> Response:
    """A run's series: per interval, per variant, scenario, load (and process), at clock times; filter by `metric`.
    Answers carry an `ETag`."""
    return await remembered_read(request, token, service.head(slug),
                                 lambda session, principal: SeriesList(
                                     items=service.series(session, principal, slug, metric)[0]))


@router.get("/runs/{slug}/percentiles", response_model=PercentilesOut)
def get_percentiles(slug: str, p: list[Annotated[float, Field(ge=0, le=100)]] = Query(
                        default=[], description="Percentiles, 0..100, repeatable; default: a spectrum"), session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> PercentilesOut:
    """Any percentile (`p`, repeat, 0 to 100) of every cell, from its stored HDR histogram (nearest rank)."""
    return PercentilesOut(items=service.percentiles(session, principal, slug, p))


@router.get("/runs/{slug}/files/{file_id}/raw", response_class=FileResponse, responses={200: {
    "description": "The file as uploaded", "content": {"application/octet-stream": {"schema": {"type": "string",
                                                                                         "format": "binary"}}}}})
def download_raw(slug: str, file_id: ID, session: Session = SessionDep,
                 principal: Principal = Depends(get_principal)) -> Response:
    """A raw file exactly as it was received (a runner's outputs as the `.zst` it sent)."""
    run, _ = service.get_visible_run(session, principal, slug)
    found = repository.run_file(session, run.id, file_id)
    if found is None:
        raise NotFound(f"file {file_id} not found in run '{slug}'")
    run_file, blob = found
    store = storage.get_store()
    try:
        if isinstance(store, storage.LocalStore):
            return FileResponse(store.local_path(blob.sha256, Path()), filename=run_file.filename,
                                media_type="application/octet-stream")
        # Streamed through the API: the bucket need not be reachable from the user's browser.
        chunks = store.iter_bytes(blob.sha256)
    except storage.StorageError as exc:
        log.error("raw file not readable", sha256=blob.sha256, error=str(exc))
        raise ServiceUnavailable("the raw file store cannot be read, retry later") from exc
    quoted = quote(run_file.filename)
    disposition = (f'attachment; filename="{run_file.filename}"' if quoted == run_file.filename
                   else f"attachment; filename*=utf-8''{quoted}")
    return StreamingResponse(chunks, media_type="application/octet-stream",
                             headers={"Content-Disposition": disposition, "Content-Length": str(blob.size)})


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


@router.get("/runs/{slug}/events", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {"schema": RUN_EVENT}},
                             "description": "run state, then every change"}} | errors(401))
async def events(slug: str, request: Request) -> StreamingResponse:
    """Server-sent events: the run's state now, then on every change, until it ends (a completed run:
    until its analysis is done or failed, when its alerts exist)."""
    token = bearer_token(request)

    def current() -> dict:
        """The run's state as the channel carries it (JSON), so that a state read and one received compare."""
        with unit_of_work() as session:
            run, _ = get_visible_run(session, resolve(session, token), slug)
            return json.loads(json.dumps(run_events.event_payload(run), default=str))

    # Subscribed before the state is read: a change committed in between is then both in the state
    # and on the channel, never in neither, which would leave the stream silent. A message only says that the
    # run changed: the run is read again, since what a message carries may be older than a state already sent
    # (a quiet spell's read found a later one before a delayed message arrived: the stream went back a state,
    # seen in make test). A state equal to the last one sent is not sent again: each event is a change.
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
            yield f"data: {json.dumps(state)}\n\n"
            while not run_events.is_last(state) and not await request.is_disconnected():
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=QUIET_S)
                received = None
                while message is not None:   # every message waiting: one read answers them all
                    received = json.loads(message["data"])
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0)
                try:
                    read = await run_in_threadpool(current)
                except NotFound:    # deleted meanwhile: nothing more will happen to it
                    return
                except Exception as exc:  # database away: the message's state, else the last one sent
                    log.warning("run events: the run could not be read again", run=slug, error=str(exc)[:300])
                    read = received if received is not None else state
                if read == state:
                    if received is None:
                        yield ": keep-alive\n\n"
                    continue
                state = read
                yield f"data: {json.dumps(state)}\n\n"
        finally:
            await close()

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

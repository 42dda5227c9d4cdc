from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fastapi import APIRouter, Header, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from benchtrail.auth.dependencies import TokenDep

from benchtrail.auth.principal import resolve
from benchtrail.db_boundary import unit_of_work
from benchtrail.logging import log
from benchtrail.openapi import RESULT_FILE_400, ResultFileError, errors
from benchtrail.uploads import imports, service
from benchtrail.uploads.form import Form, form_body, with_form
from benchtrail.uploads.schemas import ImportAccepted, ImportMetadata, UploadAccepted, UploadMetadata

router = APIRouter(prefix="/api/v1", tags=["uploads"])
T = TypeVar("T")


def keep_and_record(kept: service.KeptFiles, record: Callable[[Session], T]) -> T:
    """The transactions that store an upload's files (or a runner's, or an imported history), in order:

    1. name each file in `unrecorded_blobs` (so that beat's sweeper removes an object no run came to refer to);
    2. write the objects to the raw file store, with no transaction open (a slow disk or bucket holds no
       database connection);
    3. `record` the run and its files, one transaction: all or nothing;
    4. when 3 failed or recorded none of them (a duplicate), remove the objects this request created, again
       in a transaction of its own (if that fails too, the sweeper does it an hour later)."""
    with unit_of_work() as session:
        kept.note(session)
    try:
        kept.put()
        with unit_of_work() as session:
            result = record(session)
    except BaseException:
        _settle(kept)
        raise
    if not kept.recorded:
        _settle(kept)
    return result


def _settle(kept: service.KeptFiles) -> None:
    try:
        with unit_of_work() as session:
            kept.settle(session)
    except Exception as exc:  # the request's own error matters; beat's sweeper removes the objects later
        log.warning("raw file of a refused upload not removed yet", error=str(exc)[:300],
                    sha256=sorted(f.received.raw_sha256 for f in kept.files if f.created))


@router.post("/projects/{slug}/runs", response_model=UploadAccepted, status_code=202,
             openapi_extra={"requestBody": form_body(UploadMetadata, "files[i] describes the i-th file",
                                                     "Raw result files (may be gzip/zstd/zip)")},
             responses={200: {"model": UploadAccepted, "description": "Same Idempotency-Key: the existing run"},
                        **errors(400, model=ResultFileError, e400=RESULT_FILE_400), **errors(403),
                        **errors(413, e413="Upload too large (checked before it is read) or a decompression bomb")})
async def upload_run(request: Request, slug: str, token: str | None = TokenDep,
                     idempotency_key: str | None = Header(default=None, max_length=200)) -> JSONResponse:
    """Upload result files as one run (uploader token): multipart `metadata` (JSON, at most 1 MiB; `files[i]`
    describes the i-th file) and `files`. The project and the token's role are checked before the body is read;
    each file is written to the data disk once, hashed and counted against the size limit as it arrives, and its
    head checked as the worker will parse it (a bad file is 400 naming file, line, field and reason, and nothing
    is stored). Send an `Idempotency-Key`: the same key again answers the same run. 202 with the run, its
    permalink and status URL; ingest and analysis follow in the worker."""
    def check() -> None:   # an unknown project or a missing role is answered before the body is read
        with unit_of_work() as session:
            service.uploader_project(session, resolve(session, token), slug)

    await run_in_threadpool(check)

    def accept(form: Form) -> UploadAccepted:
        meta = service.parse_metadata(form.text("metadata", "UploadMetadata as JSON"))
        kept = service.KeptFiles(meta.files, form.files.get("files", []))   # every file checked: nothing kept yet
        return keep_and_record(kept, lambda session: service.accept_upload(
            session, resolve(session, token), slug, meta, kept, idempotency_key))

    result = await with_form(request, accept)
    return JSONResponse(result.model_dump(mode="json"), status_code=200 if result.duplicate else 202)


@router.post("/projects/{slug}/imports", response_model=ImportAccepted, status_code=202,
             openapi_extra={"requestBody": form_body(ImportMetadata, "How to import the history",
                                                     "One history file: github-action-benchmark data.js (or its "
                                                     "JSON), or Bencher reports (JSON array)")},
             responses={**errors(400, model=ResultFileError, e400=RESULT_FILE_400), **errors(403),
                        **errors(413, e413="Upload too large (checked before it is read) or a decompression bomb")})
async def import_history(request: Request, slug: str, token: str | None = TokenDep) -> JSONResponse:
    """A history from another tool as backdated runs, one per entry, oldest first: each is ingested as an upload
    and its points join the trails in time order, so the change-point detector sees the past. The history is
    checked whole before anything is stored; an entry imported before is not imported again."""
    def check() -> None:
        with unit_of_work() as session:
            service.uploader_project(session, resolve(session, token), slug)

    await run_in_threadpool(check)

    def accept(form: Form) -> ImportAccepted:
        meta = imports.parse_metadata(form.text("metadata", "ImportMetadata as JSON"))
        rf = imports.the_file(form.files.get("files", []))
        fmt, entries = imports.check_history(rf, meta)
        kept = imports.kept_history(rf, meta, fmt)
        return keep_and_record(kept, lambda session: imports.accept_import(
            session, resolve(session, token), slug, meta, kept, fmt, entries))

    result = await with_form(request, accept)
    return JSONResponse(result.model_dump(mode="json"), status_code=202)

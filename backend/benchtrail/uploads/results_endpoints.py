"""A runner's results over HTTP (runner tokens, for the run they claimed): in one multipart request, or in a
resumable upload (open a session, send chunks, commit), checked and stored as uploads are, then ingested."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path as PathLib

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session
from starlette.requests import ClientDisconnect

from benchtrail import storage
from benchtrail.auth.principal import Principal, resolve
from benchtrail.auth.dependencies import TokenDep, bearer_token, get_principal
from benchtrail.db_boundary import request_session, unit_of_work
from benchtrail.errors import Conflict, ErrorCode, InvalidRequest, PayloadTooLarge, ServiceUnavailable
from benchtrail.openapi import RESULT_FILE_400, ResultFileError, errors
from benchtrail.plans.execution import reporting_run
from benchtrail.plans.execution_endpoints import ShareQuery
from benchtrail.uploads import results as service
from benchtrail.uploads.endpoints import keep_and_record
from benchtrail.uploads.files import scratch_folder
from benchtrail.uploads.form import Form, form_body, with_form
from benchtrail.uploads.schemas import ResultsAccepted, ResultsUploadIn, ResultsUploadOut
from benchtrail.uploads.service import KeptFiles

router = APIRouter(prefix="/api/v1/runs", tags=["execution"])
SessionDep = Depends(request_session, scope="function")


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
            reporting_run(session, resolve(session, token), slug, share, lock=False)

    await run_in_threadpool(check)

    def attach(form: Form) -> tuple[str, str, bool]:
        meta = service.parse_results_metadata(form.text("metadata", "ResultsMetadata as JSON"))
        kept = KeptFiles(meta.files, form.files.get("files", []))

        def record(session: Session) -> tuple[str, str, bool]:
            run, duplicate = service.attach_results(session, resolve(session, token), slug, meta, kept,
                                                    idempotency_key, share)
            return run.slug, run.status, duplicate

        return keep_and_record(kept, record)

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
    out, created = service.open_upload(session, principal, slug, body, idempotency_key, share)
    return JSONResponse(out.model_dump(mode="json"), status_code=201 if created else 200)


@router.get("/{slug}/results/uploads/{upload_id}", response_model=ResultsUploadOut, responses=errors(403))
def results_upload_status(slug: str, upload_id: str = UPLOAD_ID, share: int | None = ShareQuery,
                          session: Session = SessionDep, principal: Principal = Depends(get_principal)
                          ) -> ResultsUploadOut:
    """The session's offset: how many bytes of the package the server holds (resume from there)."""
    return service.status(session, principal, slug, upload_id, share)


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
    limit = service.chunk_limit()
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

        return await run_in_threadpool(_add_chunk, token, slug, upload_id, offset, path, share)
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
    body = _commit(token, slug, upload_id, share)
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if body.duplicate else 202)


def _add_chunk(token: str | None, slug: str, upload_id: str, offset: int, chunk: PathLib,
               share: int | None) -> ResultsUploadOut:
    """A chunk's transactions: one finds where its new bytes go; they are written as a part of their own with
    no transaction open (up to 64 MB, maybe to an object store); a second records the part, unless another
    request advanced the offset meanwhile (then the part is removed again)."""
    with unit_of_work() as session:
        at = service.chunk_start(session, resolve(session, token), slug, upload_id, offset, chunk.stat().st_size,
                                 share)
    if isinstance(at, ResultsUploadOut):
        return at
    name, parts = service.put_chunk(upload_id, at, chunk, offset)
    with unit_of_work() as session:
        out, recorded = service.record_chunk(session, resolve(session, token), slug, upload_id, share, at, name,
                                             parts, offset + chunk.stat().st_size)
    if not recorded:
        service.drop_part(upload_id, name)
    return out


def _commit(token: str | None, slug: str, upload_id: str, share: int | None) -> ResultsAccepted:
    """A commit's transactions: one reads what to put together; the package is assembled from its chunks,
    checked and its files stored with no transaction open (it can be gigabytes from an object store); then
    `keep_and_record` records them, as `POST .../results` does."""
    with unit_of_work() as session:
        package = service.to_commit(session, resolve(session, token), slug, upload_id, share)
    if isinstance(package, ResultsAccepted):
        return package
    meta = service.parse_results_metadata(package.metadata_json)
    with scratch_folder() as workdir:
        try:
            received = service.assemble(package, workdir)
        except (Conflict, ServiceUnavailable):
            # A commit of this session sent twice (a runner that stopped waiting for the first) may have
            # ended meanwhile and removed the chunks: then its answer is this one's.
            with unit_of_work() as session:
                done = service.to_commit(session, resolve(session, token), slug, upload_id, share)
            if isinstance(done, ResultsAccepted):
                return done
            raise
        kept = KeptFiles(meta.files, received)
        return keep_and_record(kept, lambda session: service.record_commit(
            session, resolve(session, token), slug, upload_id, share, package, meta, kept))

"""Resumable results uploads: a runner's results package sent in chunks to an upload session.

The runner opens a session for its results (`open_upload`: the results metadata, each file's name, size
and sha256, and the Idempotency-Key of these results); the session's offset (`received`) is kept by the
server. Each chunk is sent with the offset of its first byte (`add_chunk`): bytes the server already holds
are skipped, so a chunk sent again is harmless, and a chunk past the offset is refused with the offset to
resume from. After a cut the runner asks for the offset (`GET`, or opens the session again with the same
key) and goes on from there instead of starting over. `commit` checks every file against its sha256 and
stores the results exactly as `POST /runs/{run}/results` does (execution.attach_results: one transaction,
the same Idempotency-Key semantics): committing again answers `duplicate`.

A chunk's new bytes are written to the store as a part of their own with no transaction open, so that no
database connection or row lock waits on a disk or an object store; a short transaction then records the
part in the session (`parts`, in package order) and advances the offset.

Chunks are kept in the raw file store (benchtrail/storage.py: the data folder or the bucket), so any API
process on any host can take the next chunk; they are removed once the session is committed.
"""

from __future__ import annotations

import json
import secrets
import shutil
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from pydantic import Field, ValidationError
from sqlalchemy.orm import Session

from benchtrail import storage
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import (Conflict, ErrorCode, InvalidRequest, InvalidResultFile, NotFound, PayloadTooLarge,
                               ServiceUnavailable)
from benchtrail.logging import log
from benchtrail.models import ResultsUpload, Run, RunShare
from benchtrail.plans.execution import LOG_TAIL, _share, reporting_run, runner_run
from benchtrail.runstate import environments, lifecycle, shares
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate.meta import LoadgenStep
from benchtrail.uploads import repository
from benchtrail.uploads.schemas import ResultsAccepted, ResultsUploadIn, ResultsUploadOut, UploadMetadata
from benchtrail.runstate.lifecycle import RunStatus
from benchtrail.uploads.files import RawSink, ReceivedFile
from benchtrail.uploads.service import KeptFiles, store_files

CHUNK_MAX_MB = 64  # one chunk's limit (also under BENCHTRAIL_MAX_UPLOAD_MB); runners send 8 MB


def chunk_limit() -> int:
    return min(CHUNK_MAX_MB, get_settings().max_upload_mb) * 1024 * 1024


def _out(upload: ResultsUpload, run: Run) -> ResultsUploadOut:
    return ResultsUploadOut(id=upload.id, run=run.slug, offset=upload.received, size=upload.size,
                            committed=upload.committed_at is not None, chunk_max_bytes=chunk_limit())


def _accepting(run: Run, slug: str) -> None:
    late = run.status == RunStatus.FAILED and run.results_key is None
    if run.status != RunStatus.RUNNING and not late:
        raise Conflict(f"run '{slug}' is {run.status}; results are accepted only from the runner that runs it "
                       f"(or, once, late from that runner after the run failed without results)", code=ErrorCode.RESULTS_NOT_ACCEPTED)


def open_upload(session: Session, principal: Principal, slug: str, body: ResultsUploadIn,
                idempotency_key: str, share: int | None = None) -> tuple[ResultsUploadOut, bool]:
    """A new session (True), or the existing one of this Idempotency-Key with the offset to resume from."""
    run = reporting_run(session, principal, slug, share)
    existing = repository.results_upload_by_key(session, run.id, idempotency_key)
    if existing is not None:
        return _out(existing, run), False
    _accepting(run, slug)
    if run.results_key is not None:
        raise Conflict(f"run '{slug}' has its results already (another Idempotency-Key)", code=ErrorCode.RESULTS_ALREADY_RECEIVED)
    try:
        meta = ResultsMetadata.model_validate(body.metadata)
    except ValidationError as exc:
        raise InvalidRequest(f"metadata: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}", code=ErrorCode.METADATA_INVALID) from None
    if len(meta.files) != len(body.files):
        raise InvalidRequest(f"metadata.files describes {len(meta.files)} file(s) but the upload declares "
                             f"{len(body.files)}; give one entry per file, in order", code=ErrorCode.FILE_COUNT_MISMATCH)
    limit = get_settings().max_upload_mb * 1024 * 1024
    for i, f in enumerate(body.files):
        if f.size > limit:
            raise PayloadTooLarge(f"files[{i}] '{f.name}': {f.size} bytes exceeds the upload limit of "
                                  f"{get_settings().max_upload_mb} MB (BENCHTRAIL_MAX_UPLOAD_MB)")
    upload = ResultsUpload(id=uuid.uuid4().hex, run_id=run.id, idempotency_key=idempotency_key,
                           metadata_json=json.dumps(body.metadata),
                           files=[f.model_dump() for f in body.files], size=sum(f.size for f in body.files),
                           received=0, parts=[])
    session.add(upload)
    session.flush()
    return _out(upload, run), True


def _session_of(session: Session, run: Run, upload_id: str, *, lock: bool) -> ResultsUpload:
    upload = repository.results_upload(session, run.id, upload_id, lock=lock)
    if upload is None:
        raise NotFound(f"results upload '{upload_id}' not found for run '{run.slug}'")
    return upload


def status(session: Session, principal: Principal, slug: str, upload_id: str,
           share: int | None = None) -> ResultsUploadOut:
    run = reporting_run(session, principal, slug, share, lock=False)
    return _out(_session_of(session, run, upload_id, lock=False), run)


@dataclass(frozen=True, slots=True)
class ChunkAt:
    """Where a chunk's new bytes go: the package's offset the server holds (`start`), and the session's parts."""

    start: int
    parts: list[str] | None


def chunk_start(session: Session, principal: Principal, slug: str, upload_id: str, offset: int, length: int,
                share: int | None) -> ChunkAt | ResultsUploadOut:
    """What a chunk (`length` bytes at `offset` of the package) adds: where its new bytes start, or the session's
    answer when the server holds all of them already (a chunk sent again, or a committed session)."""
    run = reporting_run(session, principal, slug, share, lock=False)
    upload = _session_of(session, run, upload_id, lock=False)
    if upload.committed_at is not None:
        return _out(upload, run)
    _accepting(run, slug)
    if offset > upload.received:
        raise Conflict(f"chunk at offset {offset} but the server holds {upload.received} bytes of this "
                       f"upload; send from offset {upload.received}", extra={"offset": upload.received},
                       code=ErrorCode.CHUNK_OFFSET_AHEAD)
    if offset + length > upload.size:
        raise InvalidRequest(f"chunk at offset {offset} of {length} bytes ends past the upload's declared "
                             f"size of {upload.size} bytes", code=ErrorCode.CHUNK_PAST_END)
    if upload.received >= offset + length:
        return _out(upload, run)  # all of it held already: a chunk sent again
    return ChunkAt(upload.received, upload.parts)


def put_chunk(upload_id: str, at: ChunkAt, chunk: Path, offset: int) -> tuple[str, list[str]]:
    """The chunk's new bytes, written to the store as a part of their own (up to 64 MB, maybe to an object store;
    no transaction may be open): the part's name, and the session's parts (listed from the store for a session
    opened before revision 0022)."""
    store = storage.get_store()
    name = f"{at.start:020d}-{secrets.token_hex(8)}"
    try:
        parts = _parts_by_offset(store, upload_id) if at.parts is None else at.parts
        _put_part(store, upload_id, name, chunk, at.start - offset)
    except storage.StorageError as exc:
        log.error("results chunk not stored", upload=upload_id, error=str(exc))
        raise ServiceUnavailable("the raw file store cannot be written, retry later") from exc
    return name, parts


def record_chunk(session: Session, principal: Principal, slug: str, upload_id: str, share: int | None,
                 at: ChunkAt, name: str, parts: list[str], end: int) -> tuple[ResultsUploadOut, bool]:
    """Record part `name` (the package up to `end`) unless another request advanced the offset meanwhile (the same
    chunk sent twice at once) or the run ended: the session's answer, and whether the part was recorded (when
    not, the caller removes it; when this transaction fails, the part stays until the session is committed or
    given up, `drop_abandoned`)."""
    run = reporting_run(session, principal, slug, share, lock=False)
    upload = _session_of(session, run, upload_id, lock=True)
    recorded = upload.committed_at is None and upload.received == at.start
    if recorded:
        _accepting(run, slug)
        # A session opened before revision 0022 lists its earlier parts now (named by their offsets).
        upload.parts = [*(upload.parts if upload.parts is not None else parts), name]
        upload.received = end
        upload.updated_at = datetime.now(timezone.utc)
    return _out(upload, run), recorded


def drop_part(upload_id: str, name: str) -> None:
    _drop_part(storage.get_store(), upload_id, name)


def _put_part(store: storage.BlobStore, upload_id: str, name: str, chunk: Path, skip: int) -> None:
    """The chunk's bytes from `skip` on, stored as part `name` of the upload."""
    part = chunk
    if skip:
        part = chunk.with_name(chunk.name + ".tail")
        with chunk.open("rb") as src, part.open("wb") as dst:
            src.seek(skip)
            shutil.copyfileobj(src, dst, storage.CHUNK)
    try:
        store.put_part(upload_id, name, part)
    finally:
        if part is not chunk:
            part.unlink(missing_ok=True)


def _parts_by_offset(store: storage.BlobStore, upload_id: str) -> list[str]:
    """The parts of a session opened before revision 0022: named by their offsets alone, one after the other."""
    return [name for name in store.part_names(upload_id) if name.isdigit()]


@dataclass(frozen=True, slots=True)
class Committing:
    id: str
    files: list[dict]
    size: int
    parts: list[str] | None
    metadata_json: str
    idempotency_key: str


def assemble(package: Committing, workdir: Path) -> list[ReceivedFile]:
    """The committed package's files, put together from its chunks in `workdir` and checked (no transaction may
    be open: it can be gigabytes from an object store)."""
    return _assemble(storage.get_store(), package, workdir)


def record_commit(session: Session, principal: Principal, slug: str, upload_id: str, share: int | None,
                  package: Committing, meta: ResultsMetadata, kept: KeptFiles) -> ResultsAccepted:
    """The package as the run's results (as `POST .../results` records them), exactly once (its Idempotency-Key);
    its chunks go once this transaction committed (a failed commit keeps them for the next attempt)."""
    run, duplicate = attach_results(session, principal, slug, meta, kept, package.idempotency_key, share)
    upload = _session_of(session, run, upload_id, lock=True)
    upload.committed_at = upload.committed_at or datetime.now(timezone.utc)
    session.info.setdefault("after_commit", []).append(lambda: _drop_parts(package.id))
    return ResultsAccepted(run=run.slug, status=run.status, duplicate=duplicate)


def to_commit(session: Session, principal: Principal, slug: str, upload_id: str, share: int | None
              ) -> Committing | ResultsAccepted:
    """What a commit puts together (the session's files, size, metadata and key), or the answer when these
    results are in already; refused while bytes are missing."""
    run = reporting_run(session, principal, slug, share, lock=False)
    upload = _session_of(session, run, upload_id, lock=False)
    if upload.committed_at is not None or run.results_key == upload.idempotency_key:
        return ResultsAccepted(run=run.slug, status=run.status, duplicate=True)
    if upload.received < upload.size:
        raise Conflict(f"results upload '{upload_id}' holds {upload.received} of {upload.size} bytes; send "
                       f"the rest from offset {upload.received} first", extra={"offset": upload.received},
                       code=ErrorCode.UPLOAD_INCOMPLETE)
    return Committing(upload.id, list(upload.files), upload.size, None if upload.parts is None else list(upload.parts),
                      upload.metadata_json, upload.idempotency_key)


def _assemble(store: storage.BlobStore, upload: Committing, workdir: Path) -> list[ReceivedFile]:
    """The package's files, written once from its chunks into the upload's folder (hashed on the way),
    each checked against the sha256 the runner declared."""
    package = _Package([int(entry["size"]) for entry in upload.files],
                       [RawSink(entry["name"], workdir) for entry in upload.files])
    try:
        for name in _parts_by_offset(store, upload.id) if upload.parts is None else upload.parts:
            if int(name[:20]) != package.written:
                raise Conflict(f"results upload '{upload.id}': chunk at {int(name[:20])} where {package.written} "
                               f"was expected; upload it again", code=ErrorCode.UPLOAD_DAMAGED)
            store.read_part(upload.id, name, package)
    except storage.StorageError as exc:
        log.error("results chunks not readable", upload=upload.id, error=str(exc))
        raise ServiceUnavailable("the raw file store cannot be read, retry later") from exc
    finally:
        package.close()
    if package.written != upload.size:
        raise Conflict(f"results upload '{upload.id}': {package.written} bytes stored of {upload.size}; "
                       f"upload it again", code=ErrorCode.UPLOAD_DAMAGED)
    received = []
    for entry, sink in zip(upload.files, package.sinks):
        rf = sink.finish()
        if rf.raw_sha256 != entry["sha256"]:
            raise InvalidResultFile(entry["name"], "sha256 of the bytes received differs from the one "
                                                   "declared when the upload was opened")
        received.append(rf)
    return received


class _Package:
    """What `read_part` writes a package into: its bytes cut into the files at their declared sizes."""

    def __init__(self, sizes: list[int], sinks: list[RawSink]) -> None:
        self.sizes, self.sinks = sizes, sinks
        self.index, self.written = 0, 0

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            while self.index < len(self.sizes) and self.sizes[self.index] == self.sinks[self.index].size:
                self.index += 1
            if self.index == len(self.sizes):
                raise Conflict("the results package holds more bytes than its files declared", code=ErrorCode.UPLOAD_DAMAGED)
            sink = self.sinks[self.index]
            take = min(len(view), self.sizes[self.index] - sink.size)
            sink.write(view[:take])
            view = view[take:]
        self.written += len(data)
        return len(data)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()


ABANDONED_AFTER_S = 7 * 24 * 3600  # an upload nobody sent a chunk to for a week is given up


def drop_abandoned(session: Session, now: datetime, limit: int = 200) -> list[str]:
    """Remove the chunks and rows of upload sessions that can never be committed (beat's sweeper). A
    runner whose session is gone opens a new one with the same key and sends the package again."""
    dropped = []
    for upload in repository.abandoned_results_uploads(session, now - timedelta(seconds=ABANDONED_AFTER_S), limit):
        try:
            storage.get_store().delete_parts(upload.id)
        except storage.StorageError as exc:
            log.warning("results chunks not removed", upload=upload.id, error=str(exc))
            continue
        session.delete(upload)
        dropped.append(upload.id)
    session.flush()
    return dropped


def _drop_parts(upload_id: str) -> None:
    try:
        storage.get_store().delete_parts(upload_id)
    except storage.StorageError as exc:  # leftovers cost space only; the results are stored
        log.warning("results chunks not removed", upload=upload_id, error=str(exc))


def _drop_part(store: storage.BlobStore, upload_id: str, name: str) -> None:
    try:
        store.delete_part(upload_id, name)
    except storage.StorageError as exc:  # removed with the session's other parts later
        log.warning("results chunk not removed", upload=upload_id, part=name, error=str(exc))


class ResultsMetadata(UploadMetadata):
    """What a runner sends with its raw outputs: the files and its load generators' CPU per step.
    Criteria and validity are judged by ingest from the files and the run's plan, as for an upload."""

    loadgen: list[LoadgenStep] = Field(default_factory=list)


def attach_results(session: Session, principal: Principal, slug: str, meta: ResultsMetadata,
                   kept: KeptFiles, idempotency_key: str | None = None,
                   share: int | None = None) -> tuple[Run, bool]:
    """Record a runner's results, checked and stored beforehand (`KeptFiles`; all files or none: one
    transaction). With the Idempotency-Key of results already accepted, nothing is recorded and the
    answer says `duplicate` (the runner retried after losing the first answer). Concurrent retries
    queue on the run's row lock."""
    run = runner_run(session, principal, slug, claiming=share is not None)
    row, rows = _share(session, run, share, principal)
    if row is not None:
        return _share_results(session, run, row, rows, meta, kept, idempotency_key)
    if idempotency_key is not None and run.results_key == idempotency_key:
        return run, True
    late = run.status == RunStatus.FAILED and run.results_key is None
    if run.status != RunStatus.RUNNING and not late:
        raise Conflict(f"run '{slug}' is {run.status}; results are accepted only from the runner that runs it "
                       f"(or, once, late from that runner after the run failed without results)", code=ErrorCode.RESULTS_NOT_ACCEPTED)
    _adopt_environment(session, run, meta)
    run_meta.update(run, loadgen=meta.loadgen)
    if late:
        # The load test finished but its runner lost the API while delivering it (the sweeper or the
        # runner itself failed the run): its results still count. Recorded in the status detail.
        earlier = (run.status_detail or {}).get("reason", "")
        lifecycle.transition(run, RunStatus.INGESTING, detail={
            "reason": f"results delivered late by the runner after the run had failed ({earlier})"})
    store_files(session, run, kept)
    # No key: a placeholder still marks the run as having results (late results are accepted once).
    run.results_key = idempotency_key or f"unkeyed-{run.id}"
    run.progress = {**(run.progress or {}), "percent": 100.0, "step": "ingesting"}
    return run, False


def parse_results_metadata(metadata_raw: str) -> ResultsMetadata:
    """The results' metadata, checked before any of their files is (`KeptFiles`)."""
    try:
        return ResultsMetadata.model_validate_json(metadata_raw)
    except ValidationError as exc:
        raise InvalidRequest(f"metadata: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}", code=ErrorCode.METADATA_INVALID) from None


def _adopt_environment(session: Session, run: Run, meta: ResultsMetadata) -> None:
    """The environment the results describe becomes the run's if it has none."""
    if run.environment_id is None and meta.environment is not None:
        run.environment_id = environments.get_or_create(session, run.project_id, meta.environment).id


def _share_results(session: Session, run: Run, row: RunShare, rows: list[RunShare], meta: ResultsMetadata,
                   kept: KeptFiles, idempotency_key: str | None) -> tuple[Run, bool]:
    """One share's outputs: stored with their share (`RunFile.options.share`); the run is ingested once
    every share has delivered. Late results of a failed run are not taken from a share."""
    if idempotency_key is not None and row.results_key == idempotency_key:
        return run, True
    if run.status != RunStatus.RUNNING or row.status != "running":
        raise Conflict(f"share {row.index + 1} of run '{run.slug}' is {row.status} (run {run.status}); "
                       f"results are accepted only from the runner running the share", code=ErrorCode.SHARE_NOT_RUNNING)
    _adopt_environment(session, run, meta)
    run_meta.update(run, loadgen=[*run_meta.of(run).loadgen, *meta.loadgen])
    row.status, row.results_key = "delivered", idempotency_key or f"unkeyed-share-{row.id}"
    row.finished_at = datetime.now(timezone.utc)
    done = all(s.status == "delivered" for s in rows)
    store_files(session, run, kept, share=row.index, ingest=done)
    current = dict(run.progress or {})
    current["log"] = (list(current.get("log", [])) + [
        f"share {row.index + 1} of {len(rows)} delivered {len(kept.files)} output(s)"])[-LOG_TAIL:]
    if done:
        run.results_key = f"shares-{run.id}"
        current.update({"percent": 100.0, "step": "ingesting"})
    else:
        shares.refresh_heartbeat(run, rows)
    run.progress = current
    return run, False

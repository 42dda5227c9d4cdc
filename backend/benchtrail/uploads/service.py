"""An upload becomes a run: validate every file, keep the raw bytes, enqueue ingestion.

Every file is checked here so that a bad file is refused with its file, line and field before anything
is stored: its format, encoding and structure, and (`ingest.detect.check_file`) its first rows for the
formats the worker streams (a 1-hour JMeter CSV), the whole file for the others. The `ingest` worker
parses each file once, completely, and a later error fails the run with the same file, line and field.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from pydantic import ValidationError
from sqlalchemy.orm import Session

from benchtrail import jobs, storage
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail import logging as applog
from benchtrail.errors import AppError, ErrorCode, InvalidRequest, InvalidResultFile, InvalidText, ServiceUnavailable
from benchtrail.ingest.model import ParseError
from benchtrail.ingest.options import options_for
from benchtrail.models import Blob, Project, Run, RunFile
from benchtrail.projects import service as projects
from benchtrail.runstate import environments, lifecycle
from benchtrail.runstate.slugs import new_slug
from benchtrail.runstate.lifecycle import RunStatus
from benchtrail.runstate import meta as run_meta
from benchtrail.uploads import repository
from benchtrail.uploads.files import ReceivedFile
from benchtrail.uploads.schemas import AcceptedFile, FileIn, UploadAccepted, UploadMetadata
from benchtrail.validation import unsafe_text_errors


def parse_metadata(raw: str) -> UploadMetadata:
    """The upload's metadata, checked in full before any of its files is (`KeptFiles`)."""
    # Python's json keeps an escaped unpaired surrogate ("\ud800") as it is, so that the check below
    # can name the field that holds it.
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InvalidRequest(f"metadata: not valid JSON ({str(exc)[:200]})", code=ErrorCode.METADATA_NOT_JSON) from None
    try:
        meta = UploadMetadata.model_validate(data)
    except ValidationError as exc:
        unsafe = unsafe_text_errors(exc.errors())
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'metadata'}: {e['msg']}"
                             for e in unsafe or exc.errors())
        if unsafe:
            raise InvalidText(f"metadata: {problems}") from None
        raise InvalidRequest(f"metadata: {problems}", code=ErrorCode.METADATA_INVALID) from None
    variants = list(dict.fromkeys(f.variant for f in meta.files))
    if meta.reference is not None and meta.reference not in variants:
        raise InvalidRequest(f"reference '{meta.reference}' is not one of the variants: {', '.join(variants)}",
                             code=ErrorCode.REFERENCE_NOT_A_VARIANT)
    for i, c in enumerate(meta.criteria):
        if c.variant is not None and c.variant not in variants:
            raise InvalidRequest(f"metadata.criteria[{i}].variant: no file of variant '{c.variant}'", code=ErrorCode.CRITERION_VARIANT_UNKNOWN)
        if c.overhead and len(variants) < 2:
            raise InvalidRequest(f"metadata.criteria[{i}].overhead: an overhead needs a reference and another variant",
                                 code=ErrorCode.CRITERION_NEEDS_TWO_VARIANTS)
    return meta


def uploader_project(session: Session, principal: Principal, project_slug: str) -> Project:
    """The project, if the principal may upload to it: checked before the body is read, and again in
    the transaction that makes the run."""
    project = projects.get_visible(session, principal, project_slug)
    principal.require(project, "uploader")
    return project


def accept_upload(session: Session, principal: Principal, project_slug: str, meta: UploadMetadata,
                  kept: KeptFiles, idempotency_key: str | None) -> UploadAccepted:
    """A run from files already checked and stored (`KeptFiles`), in the transaction of `session`."""
    project = uploader_project(session, principal, project_slug)
    if idempotency_key:
        existing = repository.run_by_idempotency_key(session, project.id, idempotency_key)
        if existing is not None:
            return accepted(existing, duplicate=True, files=kept.described())

    run = _create_run(session, project, meta, idempotency_key, tool=meta.tool or "")
    store_files(session, run, kept)
    return accepted(run, files=kept.described())


@dataclass(slots=True)
class KeptFile:
    received: ReceivedFile
    spec: FileIn            # its entry in the metadata
    format: str
    created: bool = False   # this request wrote the object to the store


class KeptFiles:
    """An upload's files, checked and written to the raw file store before the transaction that records
    them, so that no database connection waits on a slow disk or object store (an API process has a few:
    `db.api_share`). The request drives it, each step's transaction its own (`uploads.endpoints.keep_and_record`):
    `note` names each file in `unrecorded_blobs` (a row the recording transaction removes), `put` writes the
    objects with no transaction open, the recording transaction calls `store_files`, and `settle` (when that
    transaction failed, or recorded none of the files: a duplicate upload) removes again each object this
    request created that no blob row refers to, under the content's lock, like `store_files`.

    A refused file is refused when the object is made, before anything is written. A process killed in
    between, or a database failing `settle`, leaves the row, and beat's sweeper removes the object
    (`remove_unrecorded`)."""

    def __init__(self, specs: Sequence[FileIn], received: list[ReceivedFile], *, validate: bool = True) -> None:
        if len(specs) != len(received):
            raise InvalidRequest(f"metadata.files describes {len(specs)} file(s) but the request "
                                 f"carries {len(received)}; give one entry per uploaded file, in order",
                                 code=ErrorCode.FILE_COUNT_MISMATCH)
        self.specs, self.received = specs, received
        # validate=False: the caller checked the files (an import's history) and named their formats.
        self.files = [KeptFile(rf, spec, _validate(rf, spec.format, spec) if validate else str(spec.format))
                      for rf, spec in zip(received, specs)]
        self.attempt = secrets.token_hex(16)   # this request, in unrecorded_blobs
        self.noted = False      # the files are named in unrecorded_blobs
        self.recorded = False

    def note(self, session: Session) -> None:
        repository.note_unrecorded(session, self.attempt, [f.received.raw_sha256 for f in self.files])
        self.noted = True

    def put(self) -> None:
        for f in self.files:
            f.created = _put(f.received)

    def described(self) -> list[AcceptedFile]:
        return [AcceptedFile(filename=f.received.filename, variant=f.spec.variant, format=f.format,
                             detected=f.spec.format is None) for f in self.files]

    def settle(self, session: Session) -> None:
        """Settle the files of an upload that recorded none of them: remove each object this request created
        that no blob row refers to, and drop this request's rows of the files settled so. A file neither
        recorded nor created here keeps its row: another upload may be storing it (beat's sweeper looks
        again in an hour)."""
        if not self.noted:
            return
        shas = sorted({f.received.raw_sha256 for f in self.files})
        created = {f.received.raw_sha256 for f in self.files if f.created}
        repository.lock_blobs(session, shas)
        settled = []
        for sha in shas:
            if repository.blob_by_sha256(session, sha) is not None:
                settled.append(sha)   # a run refers to it (a duplicate upload): nothing to remove
            elif sha in created:
                storage.get_store().delete(sha)
                settled.append(sha)
        repository.forget_unrecorded(session, settled, attempt=self.attempt)


UNRECORDED_AFTER_S = 3600  # an upload records its files seconds after writing them


def unrecorded_before(session: Session, now: datetime, limit: int = 200) -> list[str]:
    """The sha256 of objects uploads wrote but never recorded, named longer than UNRECORDED_AFTER_S ago (the
    upload failed and could not remove them, or its process died in between): beat's sweeper removes each
    (`remove_unrecorded`), one transaction each."""
    return list(repository.unrecorded_before(session, now - timedelta(seconds=UNRECORDED_AFTER_S), limit))


def remove_unrecorded(session: Session, sha: str, now: datetime) -> bool:
    """Remove the object `sha` unless a blob row refers to it by now; True when it was removed. Under the
    content's lock, like `store_files`, and only when no upload of the file is under way (all its rows are
    old): an upload of the same bytes that records them meanwhile writes its object again (`_blob`)."""
    before = now - timedelta(seconds=UNRECORDED_AFTER_S)
    repository.lock_blobs(session, [sha])
    if repository.unrecorded_since(session, sha, before):
        return False  # an upload of it started meanwhile
    removed = False
    if repository.blob_by_sha256(session, sha) is None:   # else a run refers to it: only the rows go
        try:
            storage.get_store().delete(sha)
        except storage.StorageError as exc:
            applog.log.warning("unrecorded raw file not removed", sha256=sha, error=str(exc)[:300])
            return False
        removed = True
    repository.forget_unrecorded(session, [sha], before=before)
    return removed


def store_files(session: Session, run: Run, kept: KeptFiles, share: int | None = None, ingest: bool = True) -> None:
    """Record the kept files as the run's and enqueue its ingestion. Shared by CI uploads and runners
    reporting their outputs. A share of a run over several generators stores its files with `share`
    and, until the last share delivered, does not ingest (`ingest=False`)."""
    run.tool = run.tool or _tool_of([f.format for f in kept.files])
    shas = [f.received.raw_sha256 for f in kept.files]
    repository.lock_blobs(session, shas)
    for position, f in enumerate(kept.files):
        blob = _blob(session, f)
        session.add(RunFile(run_id=run.id, blob_id=blob.id, filename=f.received.filename, variant=f.spec.variant,
                            format=f.format, position=position,
                            options=f.spec.model_dump(exclude={"variant", "format"}, exclude_none=True)
                            | ({"share": share} if share is not None else {})))
    repository.forget_unrecorded(session, shas)
    kept.recorded = True
    if not ingest:
        session.flush()
        return
    if run.status == RunStatus.INGESTING:  # a new upload; a plan run's results come from running
        run.heartbeat_at = datetime.now(timezone.utc)  # the sweeper re-queues ingests nobody works on
    else:
        lifecycle.transition(run, RunStatus.INGESTING)
    session.flush()
    jobs.enqueue(session, "results.ingest", run.id)


def _validate(rf: ReceivedFile, fmt: str | None, spec: object) -> str:
    from benchtrail.ingest.detect import check_file

    try:
        profile = getattr(spec, "profile", None)
        return check_file(rf.data_path, format=fmt, options=options_for(spec),
                          profile=profile.model_dump() if profile is not None else None)
    except ParseError as exc:
        raise InvalidResultFile(rf.filename, exc.reason, line=exc.line, field=exc.field) from None
    except (AppError, MemoryError):
        raise
    except Exception as exc:  # a parser bug on an odd file is still a refused file, never a 500
        applog.log.exception("parser failed unexpectedly", file=rf.filename, format=fmt)
        raise InvalidResultFile(rf.filename, f"the file could not be read ({type(exc).__name__}: "
                                             f"{str(exc)[:200]})") from None


def _tool_of(formats: list[str]) -> str:
    tools = sorted({f.split("-")[0] for f in formats})
    return "+".join(tools)


def _create_run(session: Session, project: Project, meta: UploadMetadata, idempotency_key: str | None,
                tool: str) -> Run:
    env = environments.get_or_create(session, project.id, meta.environment)
    variants = list(dict.fromkeys(f.variant for f in meta.files))
    run = Run(slug=new_slug(), project_id=project.id, environment_id=env.id, source=meta.source, tool=tool,
              agent_version=meta.agent_version, app_version=meta.app_version, commit=meta.commit,
              branch=meta.branch, labels=meta.labels, status=RunStatus.INGESTING.value,
              idempotency_key=idempotency_key,
              started_at=meta.started_at, meta=run_meta.dump(run_meta.RunMeta(
                  reference=meta.reference or variants[0], variants=variants, file_checks=meta.file_checks,
                  criteria=[c.model_dump(exclude_defaults=True) for c in meta.criteria])),
              validity=[], criteria=[], progress={})
    session.add(run)
    session.flush()
    return run


def _put(rf: ReceivedFile) -> bool:
    """Write a received file to the store unless it is there; True if this call created it."""
    try:
        return storage.get_store().put(rf.raw_path, rf.raw_sha256)
    except storage.StorageError as exc:
        applog.log.error("raw file not stored", sha256=rf.raw_sha256, error=str(exc))
        raise ServiceUnavailable("the raw file store cannot be written, retry later; nothing was stored") from exc


def _blob(session: Session, f: KeptFile) -> Blob:
    """The blob row of a kept file (under its content's lock, `lock_blobs`). A blob with a row is never
    removed; without one, the object written before this transaction may have been removed since by a
    failed upload of the same bytes (`KeptFiles.release`): then it is written again."""
    blob = repository.blob_by_sha256(session, f.received.raw_sha256)
    if blob is None:
        f.created = _put(f.received) or f.created
        blob = Blob(sha256=f.received.raw_sha256, size=f.received.raw_size)
        session.add(blob)
        session.flush()
    return blob


def accepted(run: Run, duplicate: bool = False, files: list[AcceptedFile] | None = None) -> UploadAccepted:
    base = get_settings().public_url.rstrip("/")
    return UploadAccepted(run=run.slug, id=run.id, status=run.status, permalink=f"{base}/r/{run.slug}",
                          status_url=f"{base}/api/v1/runs/{run.slug}", duplicate=duplicate, files=files or [])


"""An upload becomes a run: validate every file, keep the raw bytes, enqueue ingestion.

Every file is checked here so that a bad file is refused with its file, line and field before anything
is stored: its format, encoding and structure, and (`ingest.detect.check_file`) its first rows for the
formats the worker streams (a 1-hour JMeter CSV), the whole file for the others. The `ingest` worker
parses each file once, completely, and a later error fails the run with the same file, line and field.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timezone

from pydantic import ValidationError
from sqlalchemy.orm import Session

from benchtrail import jobs, storage
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail import logging as applog
from benchtrail.errors import AppError, InvalidRequest, InvalidResultFile, InvalidText, ServiceUnavailable
from benchtrail.ingest.model import ParseError
from benchtrail.ingest.options import options_for
from benchtrail.models import Blob, Project, Run, RunFile
from benchtrail.projects import service as projects
from benchtrail.runs import environments, lifecycle
from benchtrail.runs.lifecycle import RunStatus
from benchtrail.runs import meta as run_meta
from benchtrail.uploads import repository
from benchtrail.uploads.files import ReceivedFile
from benchtrail.uploads.schemas import UploadAccepted, UploadMetadata
from benchtrail.validation import unsafe_text_errors


def new_slug() -> str:
    """A run's slug: 11 URL-safe characters (64 random bits), never with a leading '-', which the CLI
    (`benchtrail show RUN`, `exclude`, `admin reingest`) would read as an option."""
    while (slug := secrets.token_urlsafe(8)).startswith("-"):
        pass
    return slug


def parse_metadata(raw: str) -> UploadMetadata:
    # Python's json keeps an escaped unpaired surrogate ("\ud800") as it is, so that the check below
    # can name the field that holds it.
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InvalidRequest(f"metadata: not valid JSON ({str(exc)[:200]})") from None
    try:
        return UploadMetadata.model_validate(data)
    except ValidationError as exc:
        unsafe = unsafe_text_errors(exc.errors())
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'metadata'}: {e['msg']}"
                             for e in unsafe or exc.errors())
        if unsafe:
            raise InvalidText(f"metadata: {problems}") from None
        raise InvalidRequest(f"metadata: {problems}") from None


def uploader_project(session: Session, principal: Principal, project_slug: str) -> Project:
    """The project, if the principal may upload to it: checked before the body is read, and again in
    the transaction that makes the run."""
    project = projects.get_visible(session, principal, project_slug)
    principal.require(project, "uploader")
    return project


def accept_upload(session: Session, principal: Principal, project_slug: str, metadata_raw: str,
                  received: list[ReceivedFile], idempotency_key: str | None) -> UploadAccepted:
    """A run from files already received (`uploads.form.receive_form`)."""
    project = uploader_project(session, principal, project_slug)
    meta = parse_metadata(metadata_raw)
    variants = list(dict.fromkeys(f.variant for f in meta.files))
    if meta.reference is not None and meta.reference not in variants:
        raise InvalidRequest(f"reference '{meta.reference}' is not one of the variants: {', '.join(variants)}")
    if idempotency_key:
        existing = repository.run_by_idempotency_key(session, project.id, idempotency_key)
        if existing is not None:
            return accepted(existing, duplicate=True)

    run = _create_run(session, project, meta, idempotency_key, tool=meta.tool or "")
    store_files(session, run, meta, received)
    return accepted(run)


def store_files(session: Session, run: Run, meta: UploadMetadata, received: list[ReceivedFile],
                share: int | None = None, ingest: bool = True) -> None:
    """Validate every file (refusing the whole request on the first bad one), keep the raw bytes and
    enqueue ingestion of the run. Shared by CI uploads and runners reporting their outputs. A share of
    a run over several generators stores its files with `share` and, until the last share delivered,
    does not ingest (`ingest=False`)."""
    if len(meta.files) != len(received):
        raise InvalidRequest(f"metadata.files describes {len(meta.files)} file(s) but the request "
                             f"carries {len(received)}; give one entry per uploaded file, in order")
    formats = [_validate(rf, spec.format, spec) for rf, spec in zip(received, meta.files)]
    run.tool = run.tool or _tool_of(formats)
    repository.lock_blobs(session, [rf.raw_sha256 for rf in received])
    for position, (rf, spec, fmt) in enumerate(zip(received, meta.files, formats)):
        blob = _store_blob(session, rf)
        session.add(RunFile(run_id=run.id, blob_id=blob.id, filename=rf.filename, variant=spec.variant,
                            format=fmt, position=position,
                            options=spec.model_dump(exclude={"variant", "format"}, exclude_none=True)
                            | ({"share": share} if share is not None else {})))
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
        return check_file(rf.data_path, format=fmt, options=options_for(spec))
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
    for i, c in enumerate(meta.criteria):
        if c.variant is not None and c.variant not in variants:
            raise InvalidRequest(f"metadata.criteria[{i}].variant: no file of variant '{c.variant}'")
        if c.overhead and len(variants) < 2:
            raise InvalidRequest(f"metadata.criteria[{i}].overhead: an overhead needs a reference and another variant")
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


def _store_blob(session: Session, rf: ReceivedFile) -> Blob:
    """The blob of a received file (under its advisory lock, `lock_blobs`): the object is written
    before the row is committed; an object this transaction created is removed if it rolls back."""
    blob = repository.blob_by_sha256(session, rf.raw_sha256)
    store = storage.get_store()
    try:
        created = store.put(rf.raw_path, rf.raw_sha256)
    except storage.StorageError as exc:
        applog.log.error("raw file not stored", sha256=rf.raw_sha256, error=str(exc))
        raise ServiceUnavailable("the raw file store cannot be written, retry later; nothing was stored") from exc
    if created:
        # A rolled-back upload leaves nothing behind. Undone before the rollback ends the transaction
        # (and its lock on this sha256), so a concurrent writer of the same bytes never loses them.
        session.info.setdefault("before_rollback", []).append(lambda sha=rf.raw_sha256: store.delete(sha))
    if blob is None:
        blob = Blob(sha256=rf.raw_sha256, size=rf.raw_size)
        session.add(blob)
        session.flush()
    return blob


def accepted(run: Run, duplicate: bool = False) -> UploadAccepted:
    base = get_settings().public_url.rstrip("/")
    return UploadAccepted(run=run.slug, id=run.id, status=run.status, permalink=f"{base}/r/{run.slug}",
                          status_url=f"{base}/api/v1/runs/{run.slug}", duplicate=duplicate)


"""Bringing a history from another tool (`POST /projects/{p}/imports`, `benchtrail import`): a
github-action-benchmark `data.js` or a Bencher reports export becomes one backdated run per entry, in time
order, so that trails and the change-point detector see the past.

The whole history is read and checked first (every entry's cells, `ingest.parsers.history.read_history`): a
bad entry refuses the import, naming the file, the entry and the field, and nothing is stored. The raw file
is then stored once; each run refers to it with its entry (`RunFile.options["entry"]`) and is ingested by
the worker as any upload. An entry already imported into the project (the same file's bytes and entry:
the run's idempotency key) is not imported twice, so an import can be repeated after the history grew.
"""

from __future__ import annotations

import json
from datetime import timezone

from pydantic import ValidationError
from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.auth.principal import Principal
from benchtrail.errors import ErrorCode, InvalidRequest, InvalidResultFile, InvalidText
from benchtrail.ingest.model import ParseError
from benchtrail.models import Run, RunFile
from benchtrail.runstate import environments
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate.lifecycle import RunStatus
from benchtrail.uploads import repository
from benchtrail.uploads.files import ReceivedFile
from benchtrail.uploads.schemas import EnvironmentIn, FileIn, ImportAccepted, ImportedRun, ImportMetadata
from benchtrail.uploads.service import KeptFiles, _blob, accepted, new_slug, uploader_project
from benchtrail.validation import unsafe_text_errors

MAX_ENTRIES = 5000


def parse_metadata(raw: str) -> ImportMetadata:
    try:
        data = json.loads(raw or "{}")
    except (ValueError, RecursionError) as exc:
        raise InvalidRequest(f"metadata: not valid JSON ({str(exc)[:200]})", code=ErrorCode.METADATA_NOT_JSON) from None
    try:
        return ImportMetadata.model_validate(data)
    except ValidationError as exc:
        unsafe = unsafe_text_errors(exc.errors())
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'metadata'}: {e['msg']}"
                             for e in unsafe or exc.errors())
        if unsafe:
            raise InvalidText(f"metadata: {problems}") from None
        raise InvalidRequest(f"metadata: {problems}", code=ErrorCode.METADATA_INVALID) from None


def check_history(rf: ReceivedFile, meta: ImportMetadata) -> tuple[str, list]:
    """(format, [(HistoryEntry, ParsedFile)]) of the received history, or InvalidResultFile."""
    from benchtrail.ingest.detect import HISTORIES, detect_format
    from benchtrail.ingest.parsers.history import read_history

    try:
        fmt = meta.format or detect_format(rf.data_path)
        if fmt not in HISTORIES:
            raise ParseError(f"this is a {fmt} file, one run: upload it (benchtrail upload, POST "
                             "/api/v1/projects/{project}/runs); an import reads histories "
                             f"({', '.join(sorted(HISTORIES))})")
        entries = read_history(rf.data_path, fmt)
    except ParseError as exc:
        raise InvalidResultFile(rf.filename, exc.reason, line=exc.line, field=exc.field) from None
    if not entries:
        raise InvalidResultFile(rf.filename, "the history has no runs")
    if len(entries) > MAX_ENTRIES:
        raise InvalidResultFile(rf.filename, f"{len(entries)} runs: an import takes at most {MAX_ENTRIES}; split it")
    return fmt, entries


def accept_import(session: Session, principal: Principal, project_slug: str, meta: ImportMetadata, kept: KeptFiles,
                  fmt: str, entries: list) -> ImportAccepted:
    project = uploader_project(session, principal, project_slug)
    [f] = kept.files
    repository.lock_blobs(session, [f.received.raw_sha256])
    blob = _blob(session, f)
    runs: list[ImportedRun] = []
    for history, parsed in entries:
        key = f"import:{f.received.raw_sha256[:40]}:{history.entry}"
        existing = repository.run_by_idempotency_key(session, project.id, key)
        if existing is not None:
            runs.append(_imported(existing, history, duplicate=True))
            continue
        env_in = meta.environment
        if env_in is None and history.environment:
            env_in = EnvironmentIn(name=history.environment)
        env = environments.get_or_create(session, project.id, env_in)
        labels = {**history.labels, **meta.labels}
        run = Run(slug=new_slug(), project_id=project.id, environment_id=env.id, source="import",
                  tool=(meta.tool or parsed.tool or history.tool or fmt)[:32], agent_version=None, app_version=None,
                  commit=history.commit, branch=meta.branch or history.branch, labels=labels,
                  status=RunStatus.INGESTING.value, idempotency_key=key,
                  started_at=history.started_at.astimezone(timezone.utc),
                  meta=run_meta.dump(run_meta.RunMeta(reference=meta.variant, variants=[meta.variant])),
                  validity=[], criteria=[], progress={})
        session.add(run)
        session.flush()
        session.add(RunFile(run_id=run.id, blob_id=blob.id, filename=f.received.filename, variant=meta.variant,
                            format=fmt, position=0, options={"entry": history.entry}))
        session.flush()
        jobs.enqueue(session, "results.ingest", run.id)
        runs.append(_imported(run, history))
    repository.forget_unrecorded(session, [f.received.raw_sha256])
    kept.recorded = True
    return ImportAccepted(format=fmt, runs=runs, imported=sum(1 for r in runs if not r.duplicate),
                          already=sum(1 for r in runs if r.duplicate))


def _imported(run: Run, history, duplicate: bool = False) -> ImportedRun:  # type: ignore[no-untyped-def]
    a = accepted(run, duplicate=duplicate)
    return ImportedRun(run=a.run, id=a.id, status=a.status, permalink=a.permalink, status_url=a.status_url,
                       entry=history.entry, started_at=history.started_at, commit=history.commit,
                       benchmarks=history.benchmarks, duplicate=duplicate)


def the_file(received: list[ReceivedFile]) -> ReceivedFile:
    if len(received) != 1:
        raise InvalidRequest(f"an import takes one history file (field 'files'); the request carries {len(received)}",
                             code=ErrorCode.FILE_COUNT_MISMATCH)
    return received[0]


def kept_history(rf: ReceivedFile, meta: ImportMetadata, fmt: str) -> KeptFiles:
    """The checked history, to be stored as the runs' one raw file (`KeptFiles`: removed again if the
    transaction that records it fails)."""
    return KeptFiles([FileIn(variant=meta.variant, format=fmt)], [rf], validate=False)

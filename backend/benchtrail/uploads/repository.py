"""Every query of the uploads domain."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import delete, func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from benchtrail.models import Blob, ResultsUpload, Run, UnrecordedBlob


def run_by_idempotency_key(session: Session, project_id: int, key: str) -> Run | None:
    return session.scalar(select(Run).where(Run.project_id == project_id, Run.idempotency_key == key))


def blob_by_sha256(session: Session, sha256: str) -> Blob | None:
    return session.scalar(select(Blob).where(Blob.sha256 == sha256))


# Advisory lock class of "a raw file's sha256" (the second key is the hash's first 32 bits).
_BLOB_LOCK = 7402


def lock_blobs(session: Session, sha256s: Iterable[str]) -> None:
    """Serialise writers of the same content until the transaction ends, so that one whose transaction
    rolls back removes the object it created before another writer can count on it. Sorted: no deadlock."""
    for sha in sorted(set(sha256s)):
        session.execute(text("SELECT pg_advisory_xact_lock(:cls, :id)"),
                        {"cls": _BLOB_LOCK, "id": int(sha[:8], 16) - (1 << 31)})


def note_unrecorded(session: Session, attempt: str, sha256s: Iterable[str]) -> None:
    """Files one upload request (`attempt`) is about to write to the store before the transaction that
    records them. In a transaction of its own, which does not wait for its WAL to reach the disk: a row
    PostgreSQL loses in a crash of its own only leaves an object that costs space, and waiting would add a
    disk flush to every upload."""
    rows = [{"sha256": sha, "attempt": attempt} for sha in sorted(set(sha256s))]
    if not rows:
        return
    session.execute(text("SET LOCAL synchronous_commit = off"))
    session.execute(insert(UnrecordedBlob).values(rows))


def forget_unrecorded(session: Session, sha256s: Iterable[str], attempt: str | None = None,
                      before: datetime | None = None) -> None:
    """The rows of these files: one request's (`attempt`) or every request's, older than `before` if given."""
    query = delete(UnrecordedBlob).where(UnrecordedBlob.sha256.in_(sorted(set(sha256s))))
    if attempt is not None:
        query = query.where(UnrecordedBlob.attempt == attempt)
    if before is not None:
        query = query.where(UnrecordedBlob.written_at < before)
    session.execute(query)


def unrecorded_before(session: Session, before: datetime, limit: int) -> list[str]:
    """Files whose rows are all older than `before` (no upload of them is under way)."""
    query = (select(UnrecordedBlob.sha256).group_by(UnrecordedBlob.sha256)
             .having(func.max(UnrecordedBlob.written_at) < before)
             .order_by(func.max(UnrecordedBlob.written_at)).limit(limit))
    return list(session.scalars(query))


def unrecorded_since(session: Session, sha256: str, since: datetime) -> bool:
    """Whether an upload of this file named it at or after `since`."""
    return session.scalar(select(UnrecordedBlob.sha256).where(
        UnrecordedBlob.sha256 == sha256, UnrecordedBlob.written_at >= since).limit(1)) is not None


def results_upload_by_key(session: Session, run_id: int, key: str) -> ResultsUpload | None:
    return session.scalar(select(ResultsUpload).where(ResultsUpload.run_id == run_id,
                                                      ResultsUpload.idempotency_key == key))


def results_upload(session: Session, run_id: int, upload_id: str, *, lock: bool) -> ResultsUpload | None:
    stmt = select(ResultsUpload).where(ResultsUpload.run_id == run_id, ResultsUpload.id == upload_id)
    return session.scalar(stmt.with_for_update() if lock else stmt)


def abandoned_results_uploads(session: Session, idle_before: datetime, limit: int) -> Sequence[ResultsUpload]:
    """Uncommitted upload sessions no commit can use any more: their run has other results or ended
    (completed, cancelled), or nobody sent a chunk since `idle_before`. Locked, skipping busy ones."""
    stmt = (select(ResultsUpload).join(Run, Run.id == ResultsUpload.run_id)
            .where(ResultsUpload.committed_at.is_(None),
                   (Run.results_key.is_not(None)) | Run.status.in_(("completed", "cancelled"))
                   | (ResultsUpload.updated_at < idle_before))
            .order_by(ResultsUpload.updated_at).limit(limit)
            .with_for_update(of=ResultsUpload, skip_locked=True))
    return session.scalars(stmt).all()

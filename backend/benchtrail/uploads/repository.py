"""Every query of the uploads domain."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from benchtrail.models import Blob, Run, UnrecordedBlob


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


def note_unrecorded(session: Session, sha256s: Iterable[str]) -> None:
    """Objects about to be written to the store before the transaction that records them (a new attempt
    at the same content starts the clock again). In a transaction of its own, which does not wait for its
    WAL to reach the disk: a row PostgreSQL loses in a crash of its own only leaves an object that costs
    space, and waiting would add a disk flush to every upload."""
    rows = [{"sha256": sha} for sha in sorted(set(sha256s))]
    if not rows:
        return
    session.execute(text("SET LOCAL synchronous_commit = off"))
    stmt = insert(UnrecordedBlob).values(rows)
    session.execute(stmt.on_conflict_do_update(index_elements=[UnrecordedBlob.sha256],
                                               set_={"written_at": func.now()}))


def forget_unrecorded(session: Session, sha256s: Iterable[str]) -> None:
    session.execute(delete(UnrecordedBlob).where(UnrecordedBlob.sha256.in_(sorted(set(sha256s)))))


def forget_recorded(session: Session, before: datetime) -> None:
    """The rows older than `before` of files a blob row refers to."""
    session.execute(delete(UnrecordedBlob).where(
        UnrecordedBlob.written_at < before,
        select(Blob.id).where(Blob.sha256 == UnrecordedBlob.sha256).exists()))


def unrecorded_before(session: Session, before: datetime, limit: int, sha256: str | None = None) -> list[str]:
    query = select(UnrecordedBlob.sha256).where(UnrecordedBlob.written_at < before)
    if sha256 is not None:
        query = query.where(UnrecordedBlob.sha256 == sha256)
    return list(session.scalars(query.order_by(UnrecordedBlob.written_at).limit(limit)))

"""Every query of the uploads domain."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from benchtrail.models import Blob, Run


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

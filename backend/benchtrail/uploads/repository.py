"""Every query of the uploads domain."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.models import Blob, Run


def run_by_idempotency_key(session: Session, project_id: int, key: str) -> Run | None:
    return session.scalar(select(Run).where(Run.project_id == project_id, Run.idempotency_key == key))


def blob_by_sha256(session: Session, sha256: str) -> Blob | None:
    return session.scalar(select(Blob).where(Blob.sha256 == sha256))

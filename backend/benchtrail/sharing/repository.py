"""Every query of snapshots."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.models import Snapshot


def by_slug(session: Session, slug: str) -> Snapshot | None:
    return session.scalar(select(Snapshot).where(Snapshot.slug == slug))


def add(session: Session, snapshot: Snapshot) -> Snapshot:
    session.add(snapshot)
    session.flush()
    return snapshot

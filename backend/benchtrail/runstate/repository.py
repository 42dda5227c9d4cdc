"""The run row, by slug or locked: the queries of `runstate.access`."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.models import Run


def get_by_slug(session: Session, slug: str) -> Run | None:
    return session.scalar(select(Run).where(Run.slug == slug))


def lock(session: Session, run_id: int) -> Run | None:
    """The run, row-locked, with the values committed before the lock was granted. A run read earlier in
    this session (to find and authorise it) keeps its old values otherwise, and an update made from them
    undoes a concurrent one (two shares' progress reports lost each other's log lines)."""
    return session.scalar(select(Run).where(Run.id == run_id).with_for_update()
                          .execution_options(populate_existing=True))

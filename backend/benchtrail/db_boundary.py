"""Transaction boundaries for requests and tasks: commit on success, rollback on error, then send
the jobs buffered during the transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.db import get_read_sessionmaker, get_sessionmaker
from benchtrail.logging import log


@contextmanager
def unit_of_work() -> Iterator[Session]:
    session = get_sessionmaker()()
    try:
        yield session
        session.commit()
        session.info.pop("on_rollback", None)
        session.info.pop("before_rollback", None)
        jobs.send_buffered(session)
        for callback in session.info.pop("after_commit", []):
            callback()
    except BaseException:
        # Undo outside writes (a raw file stored by this transaction) while its locks are still held.
        for undo in session.info.pop("before_rollback", []):
            try:
                undo()
            except Exception as exc:  # an orphan object is harmless; the original error matters
                log.warning("undo before rollback failed", error=str(exc)[:300])
        session.rollback()
        jobs.drop_buffered(session)
        session.info.pop("after_commit", None)
        for undo in session.info.pop("on_rollback", []):
            undo()
        raise
    finally:
        session.close()


def request_session() -> Iterator[Session]:
    """FastAPI dependency (used with scope="function" so the commit happens before the response)."""
    with unit_of_work() as session:
        yield session


@contextmanager
def read_unit() -> Iterator[Session]:
    """A read (`auth.principal.in_request`): each statement is its own transaction; nothing is buffered.
    Only for reads that write nothing but a token's last-used time (at most once a minute)."""
    session = get_read_sessionmaker()()
    try:
        yield session
    finally:
        session.close()

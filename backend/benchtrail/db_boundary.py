"""Transaction boundaries for requests and tasks: commit on success, rollback on error, then send
the jobs buffered during the transaction."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.db import get_read_sessionmaker, get_sessionmaker


@contextmanager
def unit_of_work() -> Iterator[Session]:
    session = get_sessionmaker()()
    try:
        yield session
        session.commit()
        jobs.send_buffered(session)
        for callback in session.info.pop("after_commit", []):
            callback()
    except BaseException:
        session.rollback()
        jobs.drop_buffered(session)
        session.info.pop("after_commit", None)
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

"""Engine and sessions, shared by the API and the worker (sync SQLAlchemy 2).

Transactions are owned by the boundaries in `db_boundary` (a request, a task); services only flush.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import namedtuple_row
from psycopg_pool import AsyncConnectionPool
from sqlalchemy import Engine, MetaData, create_engine
from sqlalchemy.dialects.postgresql import psycopg as psycopg_dialect
from sqlalchemy.engine import make_url
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.sql import Executable

from benchtrail.config import get_settings

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


@dataclass(frozen=True, slots=True)
class ConnectionShare:
    """The connections one API process may hold: its hot reads' pool, its writes' pool (every other
    request) and its event-loop pool (kept answers found without a thread)."""

    read: int
    write: int
    loop: int

    @property
    def total(self) -> int:
        return self.read + self.write + self.loop


def api_share(total: int, processes: int) -> ConnectionShare:
    """Each of `processes` API processes' share of `total` connections, at least one per pool: a sixth for the
    loop reads (at most 4: each holds its connection for a fraction of a millisecond), a third for writes and
    every other request (at most 8), the rest for the hot reads (at most 16, what one process's threads can
    keep busy)."""
    share = max(3, total // processes)
    loop = min(4, max(1, share // 6))
    write = min(8, max(1, share // 3))
    return ConnectionShare(read=min(16, share - loop - write), write=write, loop=loop)


@lru_cache
def connection_share() -> ConnectionShare:
    settings = get_settings()
    return api_share(settings.api_db_connections, settings.api_processes or 1)


def connection_limit() -> int | None:
    """How many connections the database lets this role open in all (max_connections less the superusers'
    reserve, or the role's own limit when lower); None when it cannot be asked."""
    try:
        with psycopg.connect(_conninfo(), connect_timeout=5) as conn:
            row = conn.execute(_LIMITS).fetchone()
    except psycopg.Error:
        return None
    assert row is not None
    available, own = int(row[0]), int(row[1])
    return available if own < 0 else min(available, own)


def _conninfo() -> str:
    """BENCHTRAIL_DATABASE_URL as psycopg itself takes it (no SQLAlchemy driver name)."""
    return make_url(get_settings().database_url).set(drivername="postgresql").render_as_string(hide_password=False)


_LIMITS = ("SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int,"
           " rolconnlimit FROM pg_roles WHERE rolname = current_user")


@lru_cache
def get_engine() -> Engine:
    """Writes and every request or task that is not a hot read. In an API server process, a pool of its share
    (`connection_share`), a request waiting for a free connection (at most 30 s); elsewhere (the worker, the
    CLI) 5 kept and up to 10 more."""
    settings = get_settings()
    if settings.api_processes is None:
        return create_engine(settings.database_url, pool_pre_ping=True, pool_size=5, max_overflow=10)
    return create_engine(settings.database_url, pool_pre_ping=True, pool_size=connection_share().write,
                         max_overflow=0, pool_timeout=30)


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(), expire_on_commit=False)


@lru_cache
def get_read_sessionmaker() -> sessionmaker[Session]:
    """Sessions of the API's hot reads (`db_boundary.read_unit`): their own pool in autocommit, so a read
    costs its queries only, without BEGIN, COMMIT and the pre-ping round trips (three of the five a
    small read made). A connection found dead is replaced by the caller's retry instead of a ping."""
    engine = create_engine(get_settings().database_url, isolation_level="AUTOCOMMIT", pool_pre_ping=False,
                           pool_size=connection_share().read, max_overflow=0, pool_timeout=30)
    return sessionmaker(bind=engine, expire_on_commit=False)


# Reads on the event loop (`http_cache.remembered_read`): the few statements that find a kept answer, run
# without a thread hop or an ORM session, on a small pool per API process (`ConnectionShare.loop`).
# How long such a read waits for a connection before the caller takes the thread path instead (which answers
# 503 when the database is down, as before), and how long a failed connection is retried before it is given up.
LOOP_WAIT_S = 0.1
LOOP_RECONNECT_S = 5.0


_LOOP_POOLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncConnectionPool[AsyncConnection[Any]]] = \
    weakref.WeakKeyDictionary()


def _loop_pool() -> AsyncConnectionPool[AsyncConnection[Any]]:
    """The pool of the running event loop (one per API worker process; one per test client in tests), created on
    its first read. A connection that fails is retried with back-off for LOOP_RECONNECT_S, then given up, so
    that the next read tries again at once: after an outage the pool is back within seconds of the database."""
    loop = asyncio.get_running_loop()
    pool = _LOOP_POOLS.get(loop)
    if pool is None:
        pool = _LOOP_POOLS[loop] = AsyncConnectionPool(
            _conninfo(), min_size=1, max_size=connection_share().loop, open=False, kwargs={"autocommit": True},
            reconnect_timeout=LOOP_RECONNECT_S, name="loop-reads")
    return pool


@asynccontextmanager
async def loop_connection() -> AsyncIterator[AsyncConnection[Any]]:
    """A connection of the running loop's pool (autocommit: each statement is its own transaction). Raises
    psycopg's OperationalError (PoolTimeout among them) when none comes within LOOP_WAIT_S."""
    pool = _loop_pool()
    if pool.closed:   # its first read (opening an open pool is harmless: two first reads at once)
        await pool.open()
    async with pool.connection(timeout=LOOP_WAIT_S) as conn:
        yield conn


async def close_loop_pool() -> None:
    """At the API's shutdown (its lifespan)."""
    pool = _LOOP_POOLS.pop(asyncio.get_running_loop(), None)
    if pool is not None:
        await pool.close()


@lru_cache(maxsize=64)
def compiled(statement: Executable) -> tuple[str, dict[str, Any]]:
    """A statement's SQL for psycopg and its bound parameters' defaults, compiled once (statements run on the
    loop are module constants)."""
    sql = statement.compile(dialect=psycopg_dialect.dialect())
    return str(sql), dict(sql.params)


async def loop_row(conn: AsyncConnection[Any], statement: Executable, params: dict[str, Any]) -> Any:
    """The first row of `statement` with `params` (its columns by name, as a SQLAlchemy row), or None; run on
    `conn` as a prepared statement."""
    sql, defaults = compiled(statement)
    cursor = conn.cursor(row_factory=namedtuple_row)
    await cursor.execute(sql, {**defaults, **params}, prepare=True)  # type: ignore[arg-type]
    return await cursor.fetchone()

"""Engine and sessions, shared by the API and the worker (sync SQLAlchemy 2).

Transactions are owned by the boundaries in `db_boundary` (a request, a task); services only flush.
"""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import Engine, MetaData, create_engine
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

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


@lru_cache
def get_engine() -> Engine:
    return create_engine(get_settings().database_url, pool_pre_ping=True, pool_size=5, max_overflow=10)


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(bind=get_engine(), expire_on_commit=False)


@lru_cache
def get_read_sessionmaker() -> sessionmaker[Session]:
    """Sessions of the API's hot reads (`db_boundary.read_unit`): their own pool in autocommit, so a read
    costs its queries only, without BEGIN, COMMIT and the pre-ping round trips (three of the five a
    small read made). A connection found dead is replaced by the caller's retry instead of a ping."""
    settings = get_settings()
    engine = create_engine(settings.database_url, isolation_level="AUTOCOMMIT", pool_pre_ping=False,
                           pool_size=settings.db_read_pool_size, max_overflow=0, pool_timeout=30)
    return sessionmaker(bind=engine, expire_on_commit=False)

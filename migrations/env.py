"""Alembic environment: the database URL comes from BENCHTRAIL_DATABASE_URL (Settings)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

import benchtrail.models  # noqa: F401  (registers tables on Base.metadata)
from benchtrail.config import get_settings
from benchtrail.db import Base

target_metadata = Base.metadata


def run_migrations_online() -> None:
    url = context.config.attributes.get("database_url") or get_settings().database_url
    engine = create_engine(url)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; run against a database")
run_migrations_online()

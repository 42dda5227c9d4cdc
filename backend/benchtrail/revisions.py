"""A project's revision: a number that grows with every committed transaction that wrote the project's
data (its runs and everything in them, trails, analyses, alerts, annotations, plans), read in the same
statement as whatever else a read needs, so it costs no round trip.

The database keeps it (migration 0018): a statement-level trigger on every such table logs one row per
(project, writing transaction) in `project_changes`, so no write path can forget it; the revision is the
number of those rows plus the ones already folded into `project_revisions`. Rows are only inserted,
never updated, so writers never wait for each other. Two readers that see the same revision see the
same committed writes (a later snapshot sees every transaction an earlier one saw, so the count tells
the set). A read that takes the revision first and its data after has data at least that new, which
makes the revision a safe key for answers kept in memory (`http_cache.remembered_json`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from psycopg import AsyncConnection
from sqlalchemy import Row, Select, func, select, text
from sqlalchemy.orm import QueryableAttribute, Session
from sqlalchemy.sql.elements import ColumnElement

from benchtrail import db
from benchtrail.models import Project, ProjectChange, ProjectRevision


def of(project_id: ColumnElement[Any] | QueryableAttribute[Any]) -> ColumnElement[int]:
    """The revision of the project whose id is `project_id` (a column of the enclosing select)."""
    folded = select(ProjectRevision.folded).where(ProjectRevision.project_id == project_id).scalar_subquery()
    logged = select(func.count()).select_from(ProjectChange).where(ProjectChange.project_id == project_id) \
        .scalar_subquery()
    return (func.coalesce(folded, 0) + logged).label("revision")


def head() -> Select[int, bool, int]:
    """A project's id, is_public and revision: a remembered read's first statement (http_cache), to be
    joined to what the read finds the project through (a run, a trail) and filtered; read with `read_head`."""
    return select(Project.id, Project.is_public, of(Project.id))


class HeadQuery(NamedTuple):
    """A `head()` statement, joined and filtered to the thing read, and its parameters."""

    statement: Select[int, bool, int]
    params: dict[str, Any]


def read_head(session: Session, query: HeadQuery) -> Row[int, bool, int] | None:
    """The row of a `head()` statement, run on the session's connection, not through the ORM, whose handling
    of a select of columns costs more than the query: +6-9% req/s on the run document and the runs list."""
    return session.connection().execute(query.statement, query.params).first()


async def read_head_on_loop(conn: AsyncConnection[Any], query: HeadQuery) -> Any:
    """The same row (`id`, `is_public`, `revision`), read on the event loop (`db.loop_connection`)."""
    return await db.loop_row(conn, query.statement, query.params)


FOLD = text("""
WITH gone AS (DELETE FROM project_changes RETURNING project_id),
     n AS (SELECT project_id, count(*) AS c FROM gone GROUP BY project_id)
INSERT INTO project_revisions (project_id, folded) SELECT project_id, c FROM n
ON CONFLICT (project_id) DO UPDATE SET folded = project_revisions.folded + excluded.folded
""")


def fold(session: Session) -> None:
    """Move the committed change rows into the per-project counts, in one statement: a reader sees the
    rows or the counts, never both or neither, so no revision changes. Rows of transactions still
    running are not visible here and stay. Keeps counting the rows cheap (a periodic task)."""
    session.execute(FOLD)

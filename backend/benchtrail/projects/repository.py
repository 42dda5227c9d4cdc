from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, Select, bindparam, func, or_, select
from sqlalchemy.orm import Session

from benchtrail import revisions
from benchtrail.models import Alert, ApiToken, Project, Run


def get_by_slug(session: Session, slug: str) -> Project | None:
    return session.scalar(select(Project).where(Project.slug == slug))


OPEN_ALERT_STATES = ("new", "acknowledged", "investigating")


def _with_stats() -> Select[Any]:
    runs = select(func.count()).where(Run.project_id == Project.id).scalar_subquery()
    latest = select(func.max(Run.created_at)).where(Run.project_id == Project.id).scalar_subquery()
    # `state = a OR state = b ...` rather than `state IN (...)`: an IN list is an "expanding" parameter that
    # SQLAlchemy renders into the SQL again at every execution (4% of the API process's time on this read).
    open_alerts = select(func.count()).where(Alert.project_id == Project.id,
                                             or_(*(Alert.state == s for s in OPEN_ALERT_STATES))).scalar_subquery()
    return select(Project.id, Project.slug, Project.name, Project.description, Project.is_public,
                  Project.created_at, runs.label("run_count"), latest.label("latest_run_at"),
                  open_alerts.label("open_alerts")).where(Project.slug == bindparam("slug"))


# The API's most frequent read, built once: building it per request cost more than running it.
_WITH_STATS = _with_stats()


_HEAD = revisions.head().where(Project.slug == bindparam("slug"))


def head(slug: str) -> revisions.HeadQuery:
    """The project's id, is_public and revision, for a remembered read (http_cache)."""
    return revisions.HeadQuery(_HEAD, {"slug": slug})


def get_with_stats(session: Session, slug: str) -> Row[Any] | None:
    """The project's columns, its number of runs (`run_count`), its latest run's time (`latest_run_at`) and
    its open alerts (`open_alerts`), as one plain row: index-only scans of ix_runs_project_id_created_at_id
    and the alerts' project index. Run on the session's connection, not through the ORM: its handling of
    the statement (a Core select of columns) took a quarter of the API process's time on this read."""
    return session.connection().execute(_WITH_STATS, {"slug": slug}).first()


def list_visible(session: Session, *, project_id: int | None, all_projects: bool) -> Sequence[Project]:
    stmt = select(Project).order_by(Project.slug)
    if not all_projects:
        cond = Project.is_public.is_(True)
        if project_id is not None:
            cond = or_(cond, Project.id == project_id)
        stmt = stmt.where(cond)
    return session.scalars(stmt).all()


def run_stats(session: Session, project_ids: list[int]) -> dict[int, tuple[int, datetime | None]]:
    rows = session.execute(
        select(Run.project_id, func.count(Run.id), func.max(Run.created_at))
        .where(Run.project_id.in_(project_ids)).group_by(Run.project_id))
    return {pid: (n, last) for pid, n, last in rows}


def open_alert_counts(session: Session, project_ids: list[int]) -> dict[int, int]:
    rows = session.execute(
        select(Alert.project_id, func.count(Alert.id))
        .where(Alert.project_id.in_(project_ids), Alert.state.in_(OPEN_ALERT_STATES))
        .group_by(Alert.project_id))
    return {pid: n for pid, n in rows}


def add(session: Session, project: Project) -> Project:
    session.add(project)
    session.flush()
    return project


def add_token(session: Session, token: ApiToken) -> ApiToken:
    session.add(token)
    session.flush()
    return token

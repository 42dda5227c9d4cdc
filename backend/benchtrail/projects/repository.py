from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from benchtrail.models import Alert, ApiToken, Project, Run


def get_by_slug(session: Session, slug: str) -> Project | None:
    return session.scalar(select(Project).where(Project.slug == slug))


OPEN_ALERT_STATES = ("new", "acknowledged", "investigating")


def get_with_stats(session: Session, slug: str) -> tuple[Project, int, datetime | None, int] | None:
    """The project, its number of runs, its latest run's time and its open alerts (index-only scans of
    ix_runs_project_id_created_at_id and the alerts' project index)."""
    runs = select(func.count()).where(Run.project_id == Project.id).scalar_subquery()
    latest = select(func.max(Run.created_at)).where(Run.project_id == Project.id).scalar_subquery()
    open_alerts = select(func.count()).where(Alert.project_id == Project.id,
                                             Alert.state.in_(OPEN_ALERT_STATES)).scalar_subquery()
    row = session.execute(select(Project, runs, latest, open_alerts).where(Project.slug == slug)).first()
    return (row[0], row[1], row[2], row[3]) if row is not None else None


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

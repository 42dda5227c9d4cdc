from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from benchtrail.models import Plan, Schedule


def latest(session: Session, project_id: int, name: str) -> Plan | None:
    return session.scalar(select(Plan).where(Plan.project_id == project_id, Plan.name == name)
                          .order_by(Plan.version.desc()).limit(1))


def version(session: Session, project_id: int, name: str, number: int) -> Plan | None:
    return session.scalar(select(Plan).where(Plan.project_id == project_id, Plan.name == name,
                                             Plan.version == number))


def list_latest(session: Session, project_id: int) -> Sequence[Plan]:
    newest = select(Plan.name, func.max(Plan.version).label("v")).where(Plan.project_id == project_id) \
        .group_by(Plan.name).subquery()
    return session.scalars(select(Plan).join(newest, (Plan.name == newest.c.name) & (Plan.version == newest.c.v))
                           .where(Plan.project_id == project_id).order_by(Plan.name)).all()


def versions(session: Session, project_id: int, name: str) -> Sequence[Plan]:
    return session.scalars(select(Plan).where(Plan.project_id == project_id, Plan.name == name)
                           .order_by(Plan.version.desc())).all()


def schedules(session: Session, project_id: int) -> Sequence[Schedule]:
    return session.scalars(select(Schedule).where(Schedule.project_id == project_id).order_by(Schedule.id)).all()


def due_schedules(session: Session, now: datetime) -> Sequence[Schedule]:
    return session.scalars(select(Schedule).where(Schedule.enabled.is_(True), Schedule.next_fire_at <= now)
                           .order_by(Schedule.next_fire_at).with_for_update(skip_locked=True)).all()


def by_id(session: Session, plan_id: int) -> Plan | None:
    return session.get(Plan, plan_id)

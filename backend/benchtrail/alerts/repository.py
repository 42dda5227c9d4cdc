"""Every query of alerts, alert events, annotations, webhooks and deliveries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session, aliased

from benchtrail.models import Alert, AlertEvent, Annotation, Run, Trail, Webhook, WebhookDelivery


def add(session: Session, row: Any) -> Any:
    session.add(row)
    session.flush()
    return row


def alerts_on(session: Session, trail_ids: Sequence[int], *, for_update: bool = False) -> Sequence[Alert]:
    stmt = select(Alert).where(Alert.trail_id.in_(list(trail_ids))).order_by(Alert.id)
    if for_update:
        # Fresh from the row, not from the session: a triage may have committed since it was read.
        stmt = stmt.with_for_update().execution_options(populate_existing=True)
    return session.scalars(stmt).all()


def runs_by_id(session: Session, run_ids: Sequence[int]) -> dict[int, Run]:
    ids = list(set(run_ids))
    return {r.id: r for r in session.scalars(select(Run).where(Run.id.in_(ids)))} if ids else {}


def annotation(session: Session, project_id: int, annotation_id: int) -> Annotation | None:
    return session.scalars(select(Annotation).where(Annotation.id == annotation_id,
                                                    Annotation.project_id == project_id)).one_or_none()


def annotations(session: Session, project_id: int, *, known_only: bool = False) -> Sequence[Annotation]:
    stmt = select(Annotation).where(Annotation.project_id == project_id)
    if known_only:
        stmt = stmt.where(Annotation.known_change.is_(True))
    return session.scalars(stmt.order_by(Annotation.at.nulls_last(), Annotation.id)).all()


def alert_rows(session: Session, *, project_id: int | None = None, alert_id: int | None = None,
               trail_id: int | None = None, detected_by_run_id: int | None = None,
               filters: dict[str, str | None] | None = None) -> Sequence[tuple[Alert, Trail, Run, Run | None]]:
    """Alerts with their trail, culprit run and detecting run, newest first."""
    detected = aliased(Run)
    stmt = (select(Alert, Trail, Run, detected).join(Trail, Trail.id == Alert.trail_id)
            .join(Run, Run.id == Alert.run_id).outerjoin(detected, detected.id == Alert.detected_by_run_id))
    if project_id is not None:
        stmt = stmt.where(Alert.project_id == project_id)
    if alert_id is not None:
        stmt = stmt.where(Alert.id == alert_id)
    if trail_id is not None:
        stmt = stmt.where(Alert.trail_id == trail_id)
    if detected_by_run_id is not None:
        stmt = stmt.where(Alert.detected_by_run_id == detected_by_run_id)
    for column, value in (filters or {}).items():
        if value is not None:
            stmt = stmt.where(getattr(Alert, column) == value)
    return [tuple(r) for r in session.execute(stmt.order_by(Alert.created_at.desc(), Alert.id.desc()))]  # type: ignore[misc]


# The regression alerts a run's analysis raised that still stand, newest first, as plain rows: each is the
# alert, its trail's names and its culprit run's slug and version (what the run document shows of them).
_RAISED_BY = (select(Alert.id, Alert.state, Alert.metric, Alert.kind, Alert.direction, Alert.magnitude_abs,
                     Alert.magnitude_rel, Alert.p_value, Alert.before_value, Alert.after_value, Trail.variant,
                     Trail.scenario, Trail.load_key, Trail.mode, Run.slug, Run.agent_version)
              .join(Trail, Trail.id == Alert.trail_id).join(Run, Run.id == Alert.run_id)
              .where(Alert.detected_by_run_id == bindparam("run_id"), Alert.direction == "regression",
                     Alert.state != "withdrawn")
              .order_by(Alert.created_at.desc(), Alert.id.desc()))


def raised_by(session: Session, run_id: int) -> Sequence[Any]:
    return session.execute(_RAISED_BY, {"run_id": run_id}).all()


def events(session: Session, alert_id: int) -> Sequence[AlertEvent]:
    return session.scalars(select(AlertEvent).where(AlertEvent.alert_id == alert_id).order_by(AlertEvent.id)).all()


def webhooks(session: Session, project_id: int, *, enabled_only: bool = False) -> Sequence[Webhook]:
    stmt = select(Webhook).where(Webhook.project_id == project_id)
    if enabled_only:
        stmt = stmt.where(Webhook.enabled.is_(True))
    return session.scalars(stmt.order_by(Webhook.id)).all()


def deliveries(session: Session, webhook_id: int, limit: int) -> Sequence[WebhookDelivery]:
    return session.scalars(select(WebhookDelivery).where(WebhookDelivery.webhook_id == webhook_id)
                           .order_by(WebhookDelivery.id.desc()).limit(limit)).all()


def delivery_for_update(session: Session, delivery_id: int) -> tuple[WebhookDelivery, Webhook] | None:
    row = session.execute(select(WebhookDelivery, Webhook).join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
                          .where(WebhookDelivery.id == delivery_id).with_for_update(of=WebhookDelivery)).first()
    return (row[0], row[1]) if row else None

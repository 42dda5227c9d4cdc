from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Response
from sqlalchemy.orm import Session

from benchtrail.alerts import service, webhooks
from benchtrail.alerts.schemas import (AlertDetail, AlertEventOut, AlertGroup, AlertList, AlertOut, AlertPatch,
                                       AlertTrail, AnnotationIn, AnnotationList, AnnotationOut, AnnotationPatch,
                                       AnyState, DeliveryList, DeliveryOut, WebhookCreated, WebhookIn, WebhookList, WebhookOut)
from benchtrail.auth.principal import Principal
from benchtrail.auth.dependencies import get_principal
from benchtrail.db_boundary import request_session
from benchtrail.openapi import ID, errors
from benchtrail.models import Alert, Run, Trail, Webhook

router = APIRouter(prefix="/api/v1", tags=["alerts"])
SessionDep = Depends(request_session, scope="function")


def alert_out(a: Alert, trail: Trail, culprit: Run, detected: Run | None, project_slug: str) -> AlertOut:
    return AlertOut(
        id=a.id, project=project_slug, state=a.state, state_reason=a.state_reason, kind=a.kind,
        direction=a.direction, metric=a.metric,
        trail=AlertTrail(id=trail.id, scenario=trail.scenario, load_key=trail.load_key, variant=trail.variant,
                         mode=trail.mode),
        run=culprit.slug, agent_version=culprit.agent_version, detected_by=detected.slug if detected else None,
        magnitude_abs=a.magnitude_abs, magnitude_rel=a.magnitude_rel, p_value=a.p_value,
        effect_sigma=a.effect_sigma, before_value=a.before_value, after_value=a.after_value, assignee=a.assignee,
        notes=a.notes, summary=service.summary(a, trail, culprit), permalink=service.permalink(project_slug, a.id),
        run_permalink=service.run_permalink(culprit), created_at=a.created_at, updated_at=a.updated_at)


@router.get("/projects/{slug}/alerts", response_model=AlertList)
def list_alerts(slug: str, state: AnyState | None = None, metric: str | None = None, direction: str | None = None,
                kind: str | None = None, session: Session = SessionDep,
                principal: Principal = Depends(get_principal)) -> AlertList:
    """The project's alerts, grouped by the run that raised them; filter by `state` (`withdrawn` included),
    `metric`, `direction` and `kind`."""
    project, rows = service.list_alerts(session, principal, slug, state=state, metric=metric, direction=direction,
                                        kind=kind)
    items = [alert_out(*row, project.slug) for row in rows]
    groups: dict[str, AlertGroup] = {}
    for (a, _, culprit, detected), out in zip(rows, items):
        by = detected or culprit
        groups.setdefault(by.slug, AlertGroup(run=by.slug, agent_version=by.agent_version, alert_ids=[]))
        groups[by.slug].alert_ids.append(a.id)
    return AlertList(items=items, groups=list(groups.values()))


def _detail(session: Session, principal: Principal, alert_id: int) -> AlertDetail:
    a, trail, culprit, detected, project = service.get_alert(session, principal, alert_id)
    return AlertDetail(**alert_out(a, trail, culprit, detected, project.slug).model_dump(),
                       events=[AlertEventOut.model_validate(e, from_attributes=True)
                               for e in service.events(session, a.id)])


@router.get("/alerts/{alert_id}", response_model=AlertDetail)
def get_alert(alert_id: ID, session: Session = SessionDep,
              principal: Principal = Depends(get_principal)) -> AlertDetail:
    """One alert: its trail, metric, direction, magnitude, confidence, the run that raised it, its triage state,
    assignee, notes and the history of its changes (`events`)."""
    return _detail(session, principal, alert_id)


@router.patch("/alerts/{alert_id}", response_model=AlertDetail, responses=errors(403))
def patch_alert(alert_id: ID, body: AlertPatch, session: Session = SessionDep,
                principal: Principal = Depends(get_principal)) -> AlertDetail:
    """Triage an alert (uploader token): `state` (new, acknowledged, investigating, confirmed, fixed, wontfix,
    invalid; `withdrawn` is set only by the analysis, with `state_reason`), `assignee`, `notes`. Each change is
    recorded in `events`."""
    service.update_alert(session, principal, alert_id, state=body.state, assignee=body.assignee, notes=body.notes,
                         note=body.note)
    session.flush()
    session.expire_all()
    return _detail(session, principal, alert_id)


@router.get("/projects/{slug}/annotations", response_model=AnnotationList)
def list_annotations(slug: str, session: Session = SessionDep,
                     principal: Principal = Depends(get_principal)) -> AnnotationList:
    """The project's annotations: releases, JDK bumps, infrastructure changes on the version axis; `known_change`
    ones are fixed boundaries for change-point detection."""
    return AnnotationList(items=[AnnotationOut.model_validate(a, from_attributes=True)
                                 for a in service.list_annotations(session, principal, slug)])


@router.post("/projects/{slug}/annotations", response_model=AnnotationOut, status_code=201, responses=errors(403))
def add_annotation(slug: str, body: AnnotationIn, session: Session = SessionDep,
                   principal: Principal = Depends(get_principal)) -> AnnotationOut:
    """Add an annotation (uploader token); it needs `agent_version` or `at`. A `known_change` annotation marks a
    known change point: the detector takes it as a boundary and never alerts on it."""
    row = service.add_annotation(session, principal, slug, **body.model_dump())
    session.refresh(row)
    return AnnotationOut.model_validate(row, from_attributes=True)


@router.patch("/projects/{slug}/annotations/{annotation_id}", response_model=AnnotationOut)
def edit_annotation(slug: str, annotation_id: ID, body: AnnotationPatch, session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> AnnotationOut:
    """Edit an annotation's given fields (uploader token); it still needs `agent_version` or `at`."""
    row = service.update_annotation(session, principal, slug, annotation_id, body.model_dump(exclude_unset=True))
    session.refresh(row)
    return AnnotationOut.model_validate(row, from_attributes=True)


@router.delete("/projects/{slug}/annotations/{annotation_id}", status_code=204)
def delete_annotation(slug: str, annotation_id: ID, session: Session = SessionDep,
                      principal: Principal = Depends(get_principal)) -> Response:
    """Delete an annotation (uploader token)."""
    service.delete_annotation(session, principal, slug, annotation_id)
    return Response(status_code=204)


def webhook_out(h: Webhook) -> WebhookOut:
    return WebhookOut(id=h.id, url=h.url, style=h.style, enabled=h.enabled, secret_hint=h.secret[:4] + "…",
                      created_at=h.created_at)


@router.get("/projects/{slug}/webhooks", response_model=WebhookList, responses=errors(403))
def list_webhooks(slug: str, session: Session = SessionDep,
                  principal: Principal = Depends(get_principal)) -> WebhookList:
    """The project's webhooks (admin token)."""
    return WebhookList(items=[webhook_out(h) for h in webhooks.list_for(session, principal, slug)])


@router.post("/projects/{slug}/webhooks", response_model=WebhookCreated, status_code=201, responses=errors(403))
def create_webhook(slug: str, body: WebhookIn, session: Session = SessionDep,
                   principal: Principal = Depends(get_principal)) -> WebhookCreated:
    """Add a webhook (admin token): Slack-compatible or generic JSON, signed with `X-Benchtrail-Signature:
    sha256=HMAC-SHA256(secret, body)`. Its URL must be http(s) and match `BENCHTRAIL_WEBHOOK_ALLOWLIST`."""
    hook, secret = webhooks.create(session, principal, slug, url=body.url, style=body.style, secret=body.secret)
    session.refresh(hook)
    return WebhookCreated(**webhook_out(hook).model_dump(), secret=secret)


@router.get("/webhooks/{webhook_id}/deliveries", response_model=DeliveryList, responses=errors(403))
def list_deliveries(webhook_id: ID, limit: int = Query(default=100, ge=1, le=1000), session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> DeliveryList:
    """The webhook's delivery log: each delivery's payload, status, attempts, response code and error (admin token)."""
    return DeliveryList(items=[DeliveryOut.model_validate(d, from_attributes=True)
                               for d in webhooks.deliveries(session, principal, webhook_id, limit)])


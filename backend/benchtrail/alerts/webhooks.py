"""Webhooks: per-project destinations for regression alerts, restricted to an admin allow-list.

Every delivery is a POST of JSON, signed with the webhook's secret: header
`X-Benchtrail-Signature: sha256=<hex HMAC-SHA256 of the raw body>`. Styles: `generic` (the alert as
JSON) and `slack` (a Slack incoming-webhook body: `text` plus the same fields as an attachment).
Failed deliveries are retried with exponential backoff by the `notifications.deliver` task; every
attempt is visible in the delivery log.
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import json
import secrets
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.alerts import repository
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import ErrorCode, InvalidRequest, NotFound
from benchtrail.models import Alert, Project, Run, Trail, Webhook, WebhookDelivery
from benchtrail.projects import service as projects

SIGNATURE_HEADER = "X-Benchtrail-Signature"
MAX_ATTEMPTS = 5


def allowlist() -> list[str]:
    return [p.strip().lower() for p in get_settings().webhook_allowlist.split(",") if p.strip()]


def _host_port(url: str) -> tuple[str, int]:
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. a bracketed host that is not an IPv6 address
        raise InvalidRequest(f"webhook url '{url}' is not a valid URL: {exc}", code=ErrorCode.WEBHOOK_URL_INVALID) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest(f"webhook url '{url}' must be an http(s) URL with a host", code=ErrorCode.WEBHOOK_URL_INVALID)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise InvalidRequest(f"webhook url '{url}' has an invalid port", code=ErrorCode.WEBHOOK_URL_INVALID) from None
    return parts.hostname.lower(), port


def allowed(url: str, patterns: list[str] | None = None) -> bool:
    """host[:port] patterns with fnmatch wildcards; a pattern without a port allows every port;
    IPv6 hosts are written in brackets ('[::1]:8080')."""
    host, port = _host_port(url)
    for pattern in allowlist() if patterns is None else patterns:
        if pattern.startswith("["):
            p_host, _, rest = pattern[1:].partition("]")
            p_port = rest[1:] if rest.startswith(":") else "*"
        else:
            p_host, sep, p_port = pattern.rpartition(":") if ":" in pattern else (pattern, "", "*")
        if fnmatch.fnmatchcase(host, p_host) and fnmatch.fnmatchcase(str(port), p_port or "*"):
            return True
    return False


def delivery_for_update(session: Session, delivery_id: int) -> tuple[WebhookDelivery, Webhook] | None:
    """A delivery and its webhook, locked for the one task that sends it."""
    return repository.delivery_for_update(session, delivery_id)


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def body_bytes(payload: dict[str, Any]) -> bytes:
    """The exact bytes sent and signed (stable key order, no whitespace)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()


def create(session: Session, principal: Principal, slug: str, *, url: str, style: str,
           secret: str | None) -> tuple[Webhook, str]:
    project = projects.get_visible(session, principal, slug)
    principal.require(project, "admin")
    if not allowed(url):
        host, port = _host_port(url)
        raise InvalidRequest(f"webhook destination {host}:{port} is not in the allow-list "
                             "(BENCHTRAIL_WEBHOOK_ALLOWLIST, set by the site admin)", code=ErrorCode.WEBHOOK_NOT_ALLOWED)
    secret = secret or secrets.token_urlsafe(32)
    hook = repository.add(session, Webhook(project_id=project.id, url=url, style=style, secret=secret,
                                           enabled=True))
    return hook, secret


def list_for(session: Session, principal: Principal, slug: str) -> list[Webhook]:
    project = projects.get_visible(session, principal, slug)
    principal.require(project, "admin")  # urls may carry tokens (Slack)
    return list(repository.webhooks(session, project.id))


def deliveries(session: Session, principal: Principal, webhook_id: int, limit: int) -> list[WebhookDelivery]:
    hook = session.get(Webhook, webhook_id)
    project = session.get(Project, hook.project_id) if hook else None
    if hook is None or project is None or not principal.can_see(project):
        raise NotFound(f"webhook {webhook_id} not found")
    principal.require(project, "admin")
    return list(repository.deliveries(session, webhook_id, limit))


def alert_payload(alert: Alert, trail: Trail, culprit: Run, project: Project, detected: Run | None,
                  event: str = "alert") -> dict[str, Any]:
    """`event`: "alert" when raised (or reinstated), "alert_withdrawn" when the analysis withdrew it
    (then `summary` starts with "withdrawn: " and `state_reason` says why)."""
    from benchtrail.alerts.service import permalink, run_permalink, summary

    text = summary(alert, trail, culprit)
    return {
        "event": event, "id": alert.id, "project": project.slug,
        "summary": f"withdrawn: {text}" if event == "alert_withdrawn" else text,
        "state": alert.state, "state_reason": alert.state_reason,
        "direction": alert.direction, "kind": alert.kind, "metric": alert.metric,
        "magnitude_abs": alert.magnitude_abs, "magnitude_rel": alert.magnitude_rel, "p_value": alert.p_value,
        "before": alert.before_value, "after": alert.after_value,
        "trail": {"id": trail.id, "scenario": trail.scenario, "load": trail.load_key, "variant": trail.variant,
                  "mode": trail.mode},
        "run": culprit.slug, "agent_version": culprit.agent_version,
        "detected_by": detected.slug if detected else None,
        "permalink": permalink(project.slug, alert.id), "run_permalink": run_permalink(culprit),
    }


def styled(style: str, generic: dict[str, Any]) -> dict[str, Any]:
    if style != "slack":
        return generic
    fields = [{"title": k, "value": str(generic[k]), "short": True}
              for k in ("metric", "kind", "agent_version", "run")]
    return {"text": f"<{generic['permalink']}|Benchtrail {generic['project']}> {generic['summary']}",
            "attachments": [{"color": "danger" if generic["direction"] == "regression" else "good",
                             "fields": fields}]}


def queue_deliveries(session: Session, project: Project, alerts: list[Alert],
                     event: str = "alert") -> list[WebhookDelivery]:
    hooks = repository.webhooks(session, project.id, enabled_only=True)
    if not hooks:
        return []
    out = []
    for alert in alerts:
        _, trail, culprit, detected = repository.alert_rows(session, alert_id=alert.id)[0]
        generic = alert_payload(alert, trail, culprit, project, detected, event)
        for hook in hooks:
            d = repository.add(session, WebhookDelivery(webhook_id=hook.id, alert_id=alert.id, status="pending",
                                                        attempts=0, payload=styled(hook.style, generic)))
            jobs.enqueue(session, "notifications.deliver", d.id)
            out.append(d)
    return out

"""Alerts: raised from change points found by trail analysis, triaged by people.

- Both directions are recorded; only regressions are notified and fail a CI gate.
- A change point already alerted (same trail, metric and kind, same direction, culprit within two
  points in x-axis order) is not alerted again when later runs move it slightly.
- An alert is a real change until someone marks it `invalid`: its culprit is a known change point
  for later detection, which therefore restarts from the new level (the baseline is reset), and a
  second change soon after is judged against that level alone. Without this, a staircase of equal
  steps looks like a ramp to the detector and its steps fade as points arrive. `invalid` alerts (false
  alarms) are not boundaries.
- Confirm before alert (project setting): a scheduled run that suspects regressions stores them on
  the run and asks for one re-run of the same plan (`request_confirmation`); the re-run carries the
  label `confirmation_of = <run slug>` and raises the alerts only where its own value sits on the new
  level's side (`confirms`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.alerts import repository, webhooks
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import InvalidRequest, NotFound
from benchtrail.models import Alert, AlertEvent, Annotation, Project, Run, Trail
from benchtrail.projects import service as projects

if TYPE_CHECKING:
    from benchtrail.trails.analysis import Finding
    from benchtrail.trails.settings import AnalysisSettings

STATES = ("new", "acknowledged", "investigating", "fixed", "invalid", "wontfix")
NOT_A_CHANGE = frozenset({"invalid"})
NEARBY = 2


def known_changes(session: Session, project_id: int,
                  trail_ids: list[int]) -> tuple[list[Annotation], dict[tuple[int, str, str], set[int]]]:
    alerted: dict[tuple[int, str, str], set[int]] = defaultdict(set)
    for a in repository.alerts_on(session, trail_ids):
        if a.state not in NOT_A_CHANGE:
            alerted[(a.trail_id, a.metric, a.kind)].add(a.run_id)
    return list(repository.annotations(session, project_id, known_only=True)), alerted


def raise_alerts(session: Session, project: Project, run: Run, findings: list[Finding],
                 cfg: AnalysisSettings, current: dict[tuple[int, str, str], float]) -> list[Alert]:
    """Turn new findings into alerts, then queue one webhook delivery per regression alert."""
    existing: dict[tuple[int, str, str], list[Alert]] = defaultdict(list)
    for a in repository.alerts_on(session, sorted({f.trail_id for f in findings})):
        existing[(a.trail_id, a.metric, a.kind)].append(a)

    created: list[Alert] = []
    rejected: list[dict[str, Any]] = []
    original_slug = (run.labels or {}).get("confirmation_of")
    if original_slug is not None:
        original = session.scalar(select(Run).where(Run.slug == original_slug, Run.project_id == project.id))
        for suspect in ((original.meta or {}).get("suspected") or []) if original else []:
            key = (suspect["trail_id"], suspect["metric"], suspect["kind"])
            value = current.get(key)
            if value is not None and confirms(suspect, value):
                alert = _alert_from_suspect(session, project, run, suspect)
                existing[key].append(alert)
                created.append(alert)
            else:
                rejected.append(suspect)

    confirm_first = cfg.confirm_scheduled and run.source == "schedule" and original_slug is None
    suspected: list[dict[str, Any]] = []
    for f in findings:
        key = (f.trail_id, f.metric, f.kind)
        if _already_alerted(f, existing[key]) or any(_matches(f, s) for s in rejected):
            continue
        if confirm_first and f.change_point.direction == "regression":
            suspected.append(_suspect(f))
            continue
        alert = repository.add(session, _alert(project, run, f))
        existing[key].append(alert)
        created.append(alert)
    if suspected:
        run.meta = {**(run.meta or {}), "suspected": suspected}
        request_confirmation(session, run)
    regressions = [a for a in created if a.direction == "regression"]
    if regressions:
        webhooks.queue_deliveries(session, project, regressions)
    return created


def request_confirmation(session: Session, run: Run) -> None:
    """Ask for one re-run of `run`'s plan; the `runs.rerun` task (plans) creates it with the label
    confirmation_of = run.slug, and its analysis confirms or drops `run.meta["suspected"]`."""
    jobs.enqueue(session, "runs.rerun", run.id)


def confirms(suspect: dict[str, Any], value: float) -> bool:
    """The re-run confirms a suspected change when its value lies past the midpoint between the old
    and the new level, on the new level's side."""
    before, after = float(suspect["before_mean"]), float(suspect["after_mean"])
    midpoint = (before + after) / 2.0
    return value >= midpoint if after > before else value <= midpoint


def _suspect(f: Finding) -> dict[str, Any]:
    cp = f.change_point
    return {"trail_id": f.trail_id, "metric": f.metric, "kind": f.kind, "culprit_run_id": f.culprit.run_id,
            "direction": cp.direction, "before_mean": cp.before_mean, "after_mean": cp.after_mean,
            "magnitude_abs": cp.magnitude_abs, "magnitude_rel": _finite(cp.magnitude_rel),
            "p_value": cp.p_value, "effect_sigma": _finite(cp.effect_sigma)}


def _matches(f: Finding, suspect: dict[str, Any]) -> bool:
    return (f.trail_id, f.metric, f.kind) == (suspect["trail_id"], suspect["metric"], suspect["kind"])


def _already_alerted(f: Finding, alerts: list[Alert]) -> bool:
    order = {p.run_id: i for i, p in enumerate(f.points)}
    for a in alerts:
        if a.direction == f.change_point.direction and a.run_id in order \
                and abs(order[a.run_id] - f.change_point.index) <= NEARBY:
            return True
    return False


def _finite(v: float) -> float | None:
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def _alert(project: Project, run: Run, f: Finding) -> Alert:
    cp = f.change_point
    return Alert(project_id=project.id, run_id=f.culprit.run_id, detected_by_run_id=run.id, trail_id=f.trail_id,
                 metric=f.metric, kind=f.kind, direction=cp.direction, magnitude_abs=cp.magnitude_abs,
                 magnitude_rel=_finite(cp.magnitude_rel), p_value=cp.p_value, before_value=cp.before_mean,
                 after_value=cp.after_mean, effect_sigma=_finite(cp.effect_sigma), state="new", notes="")


def _alert_from_suspect(session: Session, project: Project, run: Run, s: dict[str, Any]) -> Alert:
    return repository.add(session, Alert(
        project_id=project.id, run_id=s["culprit_run_id"], detected_by_run_id=run.id, trail_id=s["trail_id"],
        metric=s["metric"], kind=s["kind"], direction=s["direction"], magnitude_abs=s["magnitude_abs"],
        magnitude_rel=s["magnitude_rel"], p_value=s["p_value"], before_value=s["before_mean"],
        after_value=s["after_mean"], effect_sigma=s["effect_sigma"], state="new",
        notes=f"confirmed by re-run {run.slug}"))


# ---------------------------------------------------------------------------------------------------
# reading and triage


def summary(a: Alert, trail: Trail, culprit: Run) -> str:
    where = f"{trail.variant} · {trail.scenario} · {trail.load_key}" + (f" · {trail.mode}" if trail.mode else "")
    at = f"agent {culprit.agent_version}" if culprit.agent_version else f"run {culprit.slug}"
    if a.kind == "overhead":
        return (f"{a.direction}: overhead of {where} on {a.metric} went from {a.before_value:+.2f}% to "
                f"{a.after_value:+.2f}% of the reference ({a.magnitude_abs:+.2f} points) at {at}")
    rel = f" ({a.magnitude_rel * 100:+.1f}%)" if a.magnitude_rel is not None else ""
    return (f"{a.direction}: {a.metric} of {where} went from {a.before_value:.4g} to {a.after_value:.4g}"
            f"{rel} at {at}")


def permalink(project_slug: str, alert_id: int) -> str:
    return f"{get_settings().public_url.rstrip('/')}/p/{project_slug}/alerts/{alert_id}"


def run_permalink(run: Run) -> str:
    return f"{get_settings().public_url.rstrip('/')}/r/{run.slug}"


def get_alert(session: Session, principal: Principal, alert_id: int) -> tuple[Alert, Trail, Run, Run | None, Project]:
    rows = repository.alert_rows(session, alert_id=alert_id)
    if not rows:
        raise NotFound(f"alert {alert_id} not found")
    alert, trail, culprit, detected = rows[0]
    project = session.get(Project, alert.project_id)
    assert project is not None
    if not principal.can_see(project):
        raise NotFound(f"alert {alert_id} not found")
    return alert, trail, culprit, detected, project


def list_alerts(session: Session, principal: Principal, slug: str, *, state: str | None, metric: str | None,
                direction: str | None, kind: str | None) -> tuple[Project, list[tuple[Alert, Trail, Run, Run | None]]]:
    project = projects.get_visible(session, principal, slug)
    if state is not None and state not in STATES:
        raise InvalidRequest(f"state must be one of {', '.join(STATES)}")
    return project, list(repository.alert_rows(session, project_id=project.id, filters={
        "state": state, "metric": metric, "direction": direction, "kind": kind}))


def update_alert(session: Session, principal: Principal, alert_id: int, *, state: str | None,
                 assignee: str | None, notes: str | None, note: str | None) -> None:
    alert, _, _, _, project = get_alert(session, principal, alert_id)
    principal.require(project, "uploader")
    if state is not None and state not in STATES:
        raise InvalidRequest(f"state must be one of {', '.join(STATES)}")
    changes = []
    if assignee is not None and assignee != (alert.assignee or ""):
        changes.append(f"assignee: {alert.assignee or '-'} → {assignee or '-'}")
        alert.assignee = assignee or None
    if notes is not None and notes != alert.notes:
        changes.append("notes edited")
        alert.notes = notes
    from_state = alert.state
    if state is not None and state != alert.state:
        alert.state = state
    if from_state == alert.state and not changes and not note:
        return
    text = "; ".join([*changes, *([note] if note else [])])
    repository.add(session, AlertEvent(alert_id=alert.id, from_state=from_state, to_state=alert.state,
                                       actor=principal.name, note=text))


def events(session: Session, alert_id: int) -> list[AlertEvent]:
    return list(repository.events(session, alert_id))


def add_annotation(session: Session, principal: Principal, slug: str, *, kind: str, title: str,
                   agent_version: str | None, at: Any, known_change: bool) -> Annotation:
    project = projects.get_visible(session, principal, slug)
    principal.require(project, "uploader")
    if agent_version is None and at is None:
        raise InvalidRequest("an annotation needs agent_version or at (a time), to place it on the axis")
    return repository.add(session, Annotation(project_id=project.id, kind=kind, title=title,
                                              agent_version=agent_version, at=at, known_change=known_change))


def _annotation(session: Session, principal: Principal, slug: str, annotation_id: int) -> Annotation:
    project = projects.get_visible(session, principal, slug)
    principal.require(project, "uploader")
    row = repository.annotation(session, project.id, annotation_id)
    if row is None:
        raise NotFound(f"annotation {annotation_id} not found in '{slug}'")
    return row


def update_annotation(session: Session, principal: Principal, slug: str, annotation_id: int,
                      changes: dict[str, Any]) -> Annotation:
    """Change the given fields (uploader); null clears agent_version or at, as long as one remains."""
    row = _annotation(session, principal, slug, annotation_id)
    for field in ("kind", "title", "known_change"):
        if changes.get(field) is not None:
            setattr(row, field, changes[field])
    for field in ("agent_version", "at"):
        if field in changes:
            setattr(row, field, changes[field])
    if row.agent_version is None and row.at is None:
        raise InvalidRequest("an annotation needs agent_version or at (a time), to place it on the axis")
    session.flush()
    return row


def delete_annotation(session: Session, principal: Principal, slug: str, annotation_id: int) -> None:
    session.delete(_annotation(session, principal, slug, annotation_id))
    session.flush()


def list_annotations(session: Session, principal: Principal, slug: str) -> list[Annotation]:
    project = projects.get_visible(session, principal, slug)
    return list(repository.annotations(session, project.id))


def raised_by(session: Session, project: Project, run: Run) -> list[dict[str, Any]]:
    """The regression alerts this run's analysis raised (what a CI gate fails on)."""
    rows = repository.alert_rows(session, detected_by_run_id=run.id, filters={"direction": "regression"})
    return [{"id": a.id, "summary": summary(a, trail, culprit), "metric": a.metric, "kind": a.kind,
             "direction": a.direction, "magnitude_abs": a.magnitude_abs, "magnitude_rel": a.magnitude_rel,
             "p_value": a.p_value, "run": culprit.slug, "state": a.state,
             "permalink": permalink(project.slug, a.id), "run_permalink": run_permalink(culprit)}
            for a, trail, culprit, _ in rows]

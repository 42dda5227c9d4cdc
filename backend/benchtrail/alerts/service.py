"""Alerts: raised from the change points trail analysis finds, triaged by people, withdrawn by the
analysis when the evidence no longer supports them.

- Trail analysis hands over `TrailFindings` (alerts.findings): the changes a window of a trail shows,
  and which open alerts in that window still hold. Alerts never imports trails.
- Both directions are recorded; only regressions are notified and fail a CI gate.
- A change already alerted (same trail, metric and kind, same direction, culprit within two points
  in x-axis order) is not alerted again; an open alert whose change moved by a point or two because
  runs arrived between is moved, with an event.
- Known change points are the accepted ones: annotations marked `known_change`, and alerts people
  triaged as real (`confirmed`, `fixed`, `wontfix`). An open alert (`new`, `acknowledged`,
  `investigating`) is only a candidate: the analysis re-judges it whenever points arrive around it and
  withdraws it (state `withdrawn`, the reason recorded on the alert and in an event) when the trail no
  longer shows it (webhooks get an `alert_withdrawn` event for a regression); a withdrawn alert the
  trail shows again is reinstated (`new`, notified again). `invalid` alerts
  (false alarms) are not boundaries, and no alert is raised again next to one.
- Confirm before alert (project setting): a scheduled run that suspects regressions stores them on
  the run and asks for one re-run of the same plan (`request_confirmation`); the re-run carries the
  label `confirmation_of = <run slug>` and raises the alerts only where its own value sits on the new
  level's side (`confirms`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.alerts import repository, webhooks
from benchtrail.alerts.findings import Applied, Change, TrailFindings
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import ErrorCode, InvalidRequest, NotFound
from benchtrail.models import Alert, AlertEvent, Annotation, Project, Run, Trail
from benchtrail.projects import service as projects
from benchtrail.runstate import meta as run_meta

__all__ = ["Applied", "Boundaries", "Change", "TrailFindings", "apply_findings", "boundaries", "boundaries_of"]

STATES = ("new", "acknowledged", "investigating", "confirmed", "fixed", "wontfix", "invalid", "withdrawn")
OPEN = frozenset({"new", "acknowledged", "investigating"})
ACCEPTED = frozenset({"confirmed", "fixed", "wontfix"})
USER_STATES = tuple(s for s in STATES if s != "withdrawn")
ANALYSIS_ACTOR = "analysis"
NEARBY = 2

Key = tuple[int, str, str]


@dataclass(slots=True)
class Boundaries:
    """What trail analysis needs to know of alerts and annotations for some trails."""

    annotations: list[Annotation]
    accepted: dict[Key, set[int]]                    # culprit run ids of accepted alerts
    open: dict[Key, list[tuple[int, int, str]]]      # (alert id, culprit run id, direction)


def boundaries(session: Session, project_id: int, trail_ids: list[int]) -> Boundaries:
    return boundaries_of(repository.alerts_on(session, trail_ids),
                         repository.annotations(session, project_id, known_only=True))


def boundaries_of(alert_rows: Iterable[Any], annotations: Iterable[Annotation]) -> Boundaries:
    """The boundaries given the alerts of the trails (anything with their id, trail_id, metric, kind, state,
    run_id and direction) and the project's annotations (those marking a known change are kept)."""
    accepted: dict[Key, set[int]] = defaultdict(set)
    open_: dict[Key, list[tuple[int, int, str]]] = defaultdict(list)
    for a in sorted(alert_rows, key=lambda a: a.id):
        key = (a.trail_id, a.metric, a.kind)
        if a.state in ACCEPTED:
            accepted[key].add(a.run_id)
        elif a.state in OPEN:
            open_[key].append((a.id, a.run_id, a.direction))
    return Boundaries([a for a in annotations if a.known_change], accepted, open_)


def apply_findings(session: Session, project: Project, run: Run, findings: list[TrailFindings], *,
                   confirm_scheduled: bool) -> Applied:
    """Turn the analysis of `run` into alert changes: withdraw, move and reinstate existing alerts,
    raise new ones (or suspect them, for a scheduled run awaiting confirmation), then queue one
    webhook delivery per regression alert raised or reinstated. The alerts of these trails are
    locked, so a triage arriving meanwhile waits and is applied after."""
    existing: dict[Key, list[Alert]] = defaultdict(list)
    by_id: dict[int, Alert] = {}
    for a in repository.alerts_on(session, sorted({f.trail_id for f in findings}), for_update=True):
        existing[(a.trail_id, a.metric, a.kind)].append(a)
        by_id[a.id] = a
    out = Applied()
    notify: list[Alert] = []

    for f in findings:
        for alert_id, reason in f.withdrawn.items():
            a = by_id.get(alert_id)
            if a is not None and a.state in OPEN:
                _transition(session, a, "withdrawn", reason, reason=reason)
                out.withdrawn.append(a.id)
        for alert_id, change in f.supported.items():
            a = by_id.get(alert_id)
            if a is not None and a.state in OPEN and change.culprit_run_id != a.run_id:
                culprits = repository.runs_by_id(session, [a.run_id, change.culprit_run_id])
                note = (f"culprit moved from {_where(culprits.get(a.run_id))} to "
                        f"{_where(culprits.get(change.culprit_run_id))}: runs arrived between them "
                        f"(analysis of run {run.slug})")
                _set_change(a, change)
                _transition(session, a, a.state, note)
                out.moved.append(a.id)

    current = {f.key: f.current for f in findings if f.current is not None}
    rejected: list[dict[str, Any]] = []
    original_slug = (run.labels or {}).get("confirmation_of")
    if original_slug is not None:
        original = session.scalar(select(Run).where(Run.slug == original_slug, Run.project_id == project.id))
        for suspect in run_meta.of(original).suspected if original else []:
            key = (suspect["trail_id"], suspect["metric"], suspect["kind"])
            value = current.get(key)
            if value is not None and confirms(suspect, value):
                alert = _alert_from_suspect(session, project, run, suspect)
                existing[key].append(alert)
                out.created.append(alert.id)
                notify.append(alert)
            else:
                rejected.append(suspect)

    confirm_first = confirm_scheduled and run.source == "schedule" and original_slug is None
    suspected: list[dict[str, Any]] = []
    for f in findings:
        position = {rid: i for i, rid in enumerate(f.order)}
        for change in f.changes:
            if any(_matches(f, s) for s in rejected):
                continue
            near = [a for a in existing[f.key] if _near(a, change, position)]
            if any(a.state != "withdrawn" for a in near):
                continue
            if near:
                a = min(near, key=lambda a: abs(position[a.run_id] - position[change.culprit_run_id]))
                _set_change(a, change)
                _transition(session, a, "new", f"the trail shows this change again (analysis of run {run.slug})",
                            reason=None)
                out.reinstated.append(a.id)
                notify.append(a)
                continue
            if confirm_first and change.direction == "regression":
                suspected.append(_suspect(f, change))
                continue
            alert = repository.add(session, _alert(project, run, f, change))
            existing[f.key].append(alert)
            out.created.append(alert.id)
            notify.append(alert)
    if suspected:
        run_meta.update(run, suspected=suspected)
        request_confirmation(session, run)
    regressions = [a for a in notify if a.direction == "regression"]
    if regressions:
        webhooks.queue_deliveries(session, project, regressions)
    # Whoever was told of a regression is told when it is withdrawn.
    gone = [by_id[i] for i in out.withdrawn if by_id[i].direction == "regression"]
    if gone:
        session.flush()
        webhooks.queue_deliveries(session, project, gone, event="alert_withdrawn")
    return out


def _near(a: Alert, change: Change, position: dict[int, int]) -> bool:
    return (a.direction == change.direction and a.run_id in position and change.culprit_run_id in position
            and abs(position[a.run_id] - position[change.culprit_run_id]) <= NEARBY)


def _where(run: Run | None) -> str:
    if run is None:
        return "a deleted run"
    return f"agent {run.agent_version} (run {run.slug})" if run.agent_version else f"run {run.slug}"


def _transition(session: Session, a: Alert, to_state: str, note: str, **changes: Any) -> None:
    from_state = a.state
    a.state = to_state
    if "reason" in changes:
        a.state_reason = changes["reason"]
    repository.add(session, AlertEvent(alert_id=a.id, from_state=from_state, to_state=to_state,
                                       actor=ANALYSIS_ACTOR, note=note))


def _set_change(a: Alert, c: Change) -> None:
    a.run_id = c.culprit_run_id
    a.magnitude_abs, a.magnitude_rel, a.p_value = c.magnitude_abs, Change.finite(c.magnitude_rel), c.p_value
    a.before_value, a.after_value, a.effect_sigma = c.before_mean, c.after_mean, Change.finite(c.effect_sigma)


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


def _suspect(f: TrailFindings, c: Change) -> dict[str, Any]:
    return {"trail_id": f.trail_id, "metric": f.metric, "kind": f.kind, "culprit_run_id": c.culprit_run_id,
            "direction": c.direction, "before_mean": c.before_mean, "after_mean": c.after_mean,
            "magnitude_abs": c.magnitude_abs, "magnitude_rel": Change.finite(c.magnitude_rel),
            "p_value": c.p_value, "effect_sigma": Change.finite(c.effect_sigma)}


def _matches(f: TrailFindings, suspect: dict[str, Any]) -> bool:
    return f.key == (suspect["trail_id"], suspect["metric"], suspect["kind"])


def _alert(project: Project, run: Run, f: TrailFindings, c: Change) -> Alert:
    return Alert(project_id=project.id, run_id=c.culprit_run_id, detected_by_run_id=run.id, trail_id=f.trail_id,
                 metric=f.metric, kind=f.kind, direction=c.direction, magnitude_abs=c.magnitude_abs,
                 magnitude_rel=Change.finite(c.magnitude_rel), p_value=c.p_value, before_value=c.before_mean,
                 after_value=c.after_mean, effect_sigma=Change.finite(c.effect_sigma), state="new", notes="")


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
        raise InvalidRequest(f"state must be one of {', '.join(STATES)}", code=ErrorCode.ALERT_STATE_UNKNOWN)
    return project, list(repository.alert_rows(session, project_id=project.id, filters={
        "state": state, "metric": metric, "direction": direction, "kind": kind}))


def update_alert(session: Session, principal: Principal, alert_id: int, *, state: str | None,
                 assignee: str | None, notes: str | None, note: str | None) -> None:
    alert, _, _, _, project = get_alert(session, principal, alert_id)
    principal.require(project, "uploader")
    if state is not None and state not in STATES:
        raise InvalidRequest(f"state must be one of {', '.join(STATES)}", code=ErrorCode.ALERT_STATE_UNKNOWN)
    changes = []
    if assignee is not None and assignee != (alert.assignee or ""):
        changes.append(f"assignee: {alert.assignee or '-'} → {assignee or '-'}")
        alert.assignee = assignee or None
    if notes is not None and notes != alert.notes:
        changes.append("notes edited")
        alert.notes = notes
    from_state = alert.state
    if state is not None and state != alert.state:
        if state not in USER_STATES:
            raise InvalidRequest(f"state '{state}' is set by the analysis; people set one of {', '.join(USER_STATES)}",
                                 code=ErrorCode.ALERT_STATE_SET_BY_ANALYSIS)
        alert.state = state
        alert.state_reason = None  # the analysis' reason no longer explains a state a person chose
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
        raise InvalidRequest("an annotation needs agent_version or at (a time), to place it on the axis", code=ErrorCode.ANNOTATION_NOT_PLACED)
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
        raise InvalidRequest("an annotation needs agent_version or at (a time), to place it on the axis", code=ErrorCode.ANNOTATION_NOT_PLACED)
    session.flush()
    return row


def delete_annotation(session: Session, principal: Principal, slug: str, annotation_id: int) -> None:
    session.delete(_annotation(session, principal, slug, annotation_id))
    session.flush()


def project_annotations(session: Session, project_id: int) -> list[Annotation]:
    return list(repository.annotations(session, project_id))


def list_annotations(session: Session, principal: Principal, slug: str) -> list[Annotation]:
    project = projects.get_visible(session, principal, slug)
    return list(repository.annotations(session, project.id))


def raised_by(session: Session, project: Project, run: Run) -> list[dict[str, Any]]:
    """The regression alerts this run's analysis raised and that still stand (what a CI gate fails on):
    one a later analysis withdrew is not counted."""
    # Each row is the alert, its trail (names) and its culprit run (slug, agent_version) at once.
    return [{"id": a.id, "summary": summary(a, a, a), "metric": a.metric, "kind": a.kind,
             "direction": a.direction, "magnitude_abs": a.magnitude_abs, "magnitude_rel": a.magnitude_rel,
             "p_value": a.p_value, "run": a.slug, "state": a.state,
             "permalink": permalink(project.slug, a.id), "run_permalink": run_permalink(a)}
            for a in repository.raised_by(session, run.id)]

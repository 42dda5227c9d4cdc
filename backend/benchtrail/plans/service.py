"""Plans (stored per project, versioned), starting runs of a plan, and schedules."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from croniter import croniter
from sqlalchemy.orm import Session

from benchtrail import jobs
from benchtrail.config import get_settings
from benchtrail.errors import ErrorCode, InvalidRequest, NotFound
from benchtrail.models import Plan, Project, Run, Schedule
from benchtrail.plans import model, repository, spec
from benchtrail.plans.schemas import PlanOut, ScheduleIn, ScheduleOut, SchedulePatch, StartRun
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate import shares
from benchtrail.runstate.lifecycle import RunStatus
from benchtrail.targets import plan_problems
from benchtrail.runstate.slugs import new_slug


MASK = "***"


def masked(body: dict[str, Any]) -> dict[str, Any]:
    """The plan body with every request header value replaced by "***" (header names stay)."""
    scenarios = [{**s, "headers": {k: MASK for k in s["headers"]}} if s.get("headers") else s
                 for s in body.get("scenarios", [])]
    return {**body, "scenarios": scenarios}


def split_secrets(body: dict[str, Any], current: Plan | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(body with headers masked, {scenario: {header: value}}). A value sent as "***" (a plan read back
    from the API and posted again) keeps the current version's value for that scenario and header."""
    previous = (current.secrets or {}) if current is not None else {}
    secrets: dict[str, dict[str, str]] = {}
    for i, s in enumerate(body.get("scenarios", [])):
        for key, value in (s.get("headers") or {}).items():
            if value == MASK:
                if key not in previous.get(s["name"], {}):
                    raise InvalidRequest(f"plan: scenarios[{i}].headers.{key}: '***' stands for a stored value, "
                                         f"but no earlier version of plan '{body['name']}' has this header", code=ErrorCode.PLAN_SECRET_PLACEHOLDER)
                value = previous[s["name"]][key]
            secrets.setdefault(s["name"], {})[key] = value
    return masked(body), secrets


def plan_out(p: Plan) -> PlanOut:
    return PlanOut(id=p.id, name=p.name, version=p.version, pool=p.pool, body=masked(p.body),
                   source_yaml=p.source_yaml, created_at=p.created_at)


def check_targets(body: dict[str, Any]) -> None:
    """Every URL and path in the plan against the allow-lists; 422 naming each refused field."""
    settings = get_settings()
    problems = plan_problems(body, settings.target_patterns, settings.jmx_folders)
    if problems:
        raise InvalidRequest("plan: " + "; ".join(f"{field}: {reason}" for field, reason in problems),
                             extra={"problems": [{"field": f, "reason": r} for f, r in problems]}, code=ErrorCode.PLAN_INVALID)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def save_plan(session: Session, project: Project, text: str) -> Plan:
    """Store a plan; an unchanged body keeps its version, a changed one becomes the next version."""
    body = spec.parse(text)
    check_targets(body)
    current = repository.latest(session, project.id, body["name"])
    body, secrets = split_secrets(body, current)
    if current is not None and current.body == body and (current.secrets or {}) == secrets:
        return current
    plan = Plan(project_id=project.id, name=body["name"], version=(current.version + 1) if current else 1,
                pool=body.get("pool", "default"), body=body, secrets=secrets or None,
                # The saved text would show the headers' values: a plan with headers is shown from its masked body.
                source_yaml=None if _is_json(text) or secrets else text)
    session.add(plan)
    session.flush()
    return plan


def get_plan(session: Session, project: Project, name: str, version: int | None = None) -> Plan:
    plan = repository.version(session, project.id, name, version) if version else \
        repository.latest(session, project.id, name)
    if plan is None:
        raise NotFound(f"plan '{name}'{f' version {version}' if version else ''} not found in '{project.slug}'")
    return plan


def start_run(session: Session, project: Project, plan: Plan, req: StartRun, *, source: str) -> Run:
    check_targets(plan.body)  # the allow-list may have shrunk since the plan was stored
    variants = [v["name"] for v in plan.body["variants"]]
    reference = next((v["name"] for v in plan.body["variants"] if v.get("role") == "reference"), variants[0])
    run = Run(slug=new_slug(), project_id=project.id, plan_id=plan.id, source=source, tool=plan.body["tool"],
              agent_version=req.agent_version or plan.body.get("agent_version"), app_version=req.app_version,
              commit=req.commit, branch=req.branch,
              labels=req.labels, status=RunStatus.QUEUED.value, validity=[], criteria=[], progress={},
              meta=run_meta.dump(run_meta.RunMeta(reference=reference, variants=variants, plan=plan.name,
                                                  plan_version=plan.version, pool=plan.pool,
                                                  generators=int(plan.body.get("generators", 1)))))
    session.add(run)
    session.flush()
    generators = int(plan.body.get("generators", 1))
    if generators == 1:
        jobs.enqueue(session, "runs.execute", run.slug, plan.body, queue=f"runner.{plan.pool}")
        return run
    shares.create(session, run, generators)  # one message per share, each claimed by its own runner
    for i in range(generators):
        jobs.enqueue(session, "runs.execute", run.slug, plan.body, queue=f"runner.{plan.pool}", share=i)
    return run


def plan_of_run(session: Session, run: Run) -> model.Plan | None:
    """The plan version a run ran (as the runner executed it), or None for an upload."""
    stored = repository.by_id(session, run.plan_id) if run.plan_id is not None else None
    return model.parse_plan_data(stored.body) if stored is not None else None


def parse_criteria(items: list[dict[str, Any]]) -> list[model.Criterion]:
    """Criteria stored with an upload, as the plan model reads them."""
    return [model.Criterion.model_validate(c) for c in items]


def next_fire(cron: str, after: datetime) -> datetime:
    if not croniter.is_valid(cron):
        raise InvalidRequest(f"cron: '{cron}' is not a valid cron expression (5 fields, e.g. '0 2 * * *')", code=ErrorCode.CRON_INVALID)
    return croniter(cron, after).get_next(datetime)


def create_schedule(session: Session, project: Project, data: ScheduleIn) -> Schedule:
    get_plan(session, project, data.plan)
    now = datetime.now(timezone.utc)
    row = Schedule(project_id=project.id, plan_name=data.plan, cron=data.cron, enabled=data.enabled,
                   agent_version=data.agent_version, next_fire_at=next_fire(data.cron, now))
    session.add(row)
    session.flush()
    return row


def update_schedule(session: Session, project: Project, schedule_id: int, data: SchedulePatch) -> Schedule:
    row = session.get(Schedule, schedule_id)
    if row is None or row.project_id != project.id:
        raise NotFound(f"schedule {schedule_id} not found in '{project.slug}'")
    if data.cron is not None:
        row.next_fire_at = next_fire(data.cron, datetime.now(timezone.utc))
        row.cron = data.cron
    if data.agent_version is not None:
        row.agent_version = data.agent_version
    if data.enabled is not None:
        row.enabled = data.enabled
        if data.enabled:
            row.next_fire_at = next_fire(row.cron, datetime.now(timezone.utc))
    session.flush()
    return row


def schedule_out(s: Schedule) -> ScheduleOut:
    return ScheduleOut(id=s.id, plan=s.plan_name, cron=s.cron, enabled=s.enabled, agent_version=s.agent_version,
                       next_fire_at=s.next_fire_at,
                       last_fired_at=s.last_fired_at)


def fire_due(session: Session, now: datetime) -> list[Run]:
    """Start one run for each due schedule. The next firing is computed from now, not from the
    missed time, so firings missed while beat was down are not replayed in a burst."""
    started = []
    for sched in repository.due_schedules(session, now):
        project = session.get(Project, sched.project_id)
        plan = repository.latest(session, sched.project_id, sched.plan_name)
        sched.last_fired_at = now
        sched.next_fire_at = next_fire(sched.cron, now)
        if project is None or plan is None:
            sched.enabled = False
            continue
        started.append(start_run(session, project, plan, StartRun(
            labels={"schedule": str(sched.id)}, agent_version=sched.agent_version),
                                 source="schedule"))
    session.flush()
    return started

from __future__ import annotations

from fastapi import APIRouter, Depends, Header, Request
from sqlalchemy import select
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal

from benchtrail.auth.dependencies import get_principal
from benchtrail.db_boundary import request_session
from benchtrail.models import Run
from benchtrail.openapi import ID, errors
from benchtrail.plans import repository, service
from benchtrail.plans.schemas import (PlanList, PlanOut, ScheduleIn, ScheduleList, ScheduleOut, SchedulePatch,
                                      StartRun)
from benchtrail.projects.service import get_visible
from benchtrail.runstate.summary import RunSummary, summary

router = APIRouter(prefix="/api/v1", tags=["plans"])
SessionDep = Depends(request_session, scope="function")
PLAN_BODY = {"requestBody": {"required": True, "content": {
    "application/yaml": {"schema": {"type": "string"}}, "application/json": {"schema": {"type": "object"}}}}}


@router.get("/projects/{slug}/plans", response_model=PlanList)
def list_plans(slug: str, session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> PlanList:
    """The project's plans, each at its newest version."""
    project = get_visible(session, principal, slug)
    return PlanList(items=[service.plan_out(p) for p in repository.list_latest(session, project.id)])


@router.post("/projects/{slug}/plans", response_model=PlanOut, status_code=201, openapi_extra=PLAN_BODY,
             responses=errors(403))
async def save_plan(slug: str, request: Request, session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> PlanOut:
    """Store a plan given as YAML or JSON; a changed plan becomes a new version."""
    text = (await request.body()).decode("utf-8", errors="replace")

    def work() -> PlanOut:
        project = get_visible(session, principal, slug)
        principal.require(project, "admin")
        return service.plan_out(service.save_plan(session, project, text))

    return await run_in_threadpool(work)


@router.get("/projects/{slug}/plans/{name}", response_model=PlanList)
def plan_versions(slug: str, name: str, session: Session = SessionDep,
                  principal: Principal = Depends(get_principal)) -> PlanList:
    """Every stored version of one plan, newest first, with the YAML text each was saved from (`source_yaml`);
    request headers' values are shown as `***`."""
    project = get_visible(session, principal, slug)
    service.get_plan(session, project, name)
    return PlanList(items=[service.plan_out(p) for p in repository.versions(session, project.id, name)])


@router.post("/projects/{slug}/plans/{name}/runs", response_model=RunSummary, status_code=202,
             responses=errors(403))
def start_run(slug: str, name: str, body: StartRun, session: Session = SessionDep,
              principal: Principal = Depends(get_principal),
              idempotency_key: str | None = Header(default=None, max_length=200, pattern=r"^[\x21-\x7e]+$",
                                                   description="Same key twice starts one run")) -> RunSummary:
    """Start a run of a plan (uploader token): a `queued` run sent to its runner pool (`runner.<pool>`);
    `agent_version` in the body overrides the plan's. The plan's targets are checked against the allow-lists
    again."""
    project = get_visible(session, principal, slug)
    principal.require(project, "uploader")
    if idempotency_key:
        existing = session.scalar(select(Run).where(Run.project_id == project.id,
                                                    Run.idempotency_key == idempotency_key))
        if existing is not None:
            return summary(existing, project, None)
    plan = service.get_plan(session, project, name, body.version)
    run = service.start_run(session, project, plan, body, source="manual")
    run.idempotency_key = idempotency_key
    return summary(run, project, None)


@router.get("/projects/{slug}/schedules", response_model=ScheduleList)
def list_schedules(slug: str, session: Session = SessionDep,
                   principal: Principal = Depends(get_principal)) -> ScheduleList:
    """The project's schedules: cron expressions that start a plan's runs (run by beat)."""
    project = get_visible(session, principal, slug)
    return ScheduleList(items=[service.schedule_out(s) for s in repository.schedules(session, project.id)])


@router.post("/projects/{slug}/schedules", response_model=ScheduleOut, status_code=201, responses=errors(403))
def create_schedule(slug: str, body: ScheduleIn, session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> ScheduleOut:
    """Create a schedule (admin token): a cron expression, the plan to run and optionally the `agent_version` its
    runs record."""
    project = get_visible(session, principal, slug)
    principal.require(project, "admin")
    return service.schedule_out(service.create_schedule(session, project, body))


@router.patch("/projects/{slug}/schedules/{schedule_id}", response_model=ScheduleOut, responses=errors(403))
def update_schedule(slug: str, schedule_id: ID, body: SchedulePatch, session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> ScheduleOut:
    """Change a schedule's given fields (admin token): cron, enabled, agent version."""
    project = get_visible(session, principal, slug)
    principal.require(project, "admin")
    return service.schedule_out(service.update_schedule(session, project, schedule_id, body))

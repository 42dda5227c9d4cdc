from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal, get_principal
from benchtrail.db_boundary import request_session
from benchtrail.projects import service as projects
from benchtrail.trails import service
from benchtrail.trails.schemas import CompareOut, OverheadTrail, RunOverheads, SettingsOut, TrailDetail, TrailList
from benchtrail.trails.settings import AnalysisSettings, load

_trails = APIRouter(prefix="/api/v1", tags=["trails"])
SessionDep = Depends(request_session, scope="function")


@_trails.get("/projects/{slug}/trails", response_model=TrailList)
def list_trails(slug: str, scenario: str | None = None, variant: str | None = None,
                load_key: str | None = Query(default=None, alias="load"), mode: str | None = None,
                environment: str | None = Query(default=None, description="Environment fingerprint"),
                session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> TrailList:
    return TrailList(items=service.list_trails(session, principal, slug, scenario=scenario, variant=variant,
                                               load=load_key, mode=mode, environment=environment))


@_trails.get("/trails/{trail_id}", response_model=TrailDetail)
def get_trail(trail_id: int, metric: str = "latency_p75", session: Session = SessionDep,
              principal: Principal = Depends(get_principal)) -> TrailDetail:
    return service.trail_detail(session, principal, trail_id, metric)


@_trails.get("/trails/{trail_id}/overhead", response_model=OverheadTrail)
def get_overhead_trail(trail_id: int, metric: str = "latency_p75", session: Session = SessionDep,
                       principal: Principal = Depends(get_principal)) -> OverheadTrail:
    return service.overhead_trail(session, principal, trail_id, metric)


@_trails.get("/runs/{slug}/overheads", response_model=RunOverheads)
def get_run_overheads(slug: str, metric: str = "latency_p75", session: Session = SessionDep,
                      principal: Principal = Depends(get_principal)) -> RunOverheads:
    return service.run_overheads(session, principal, slug, metric)


@_trails.get("/compare", response_model=CompareOut)
def compare(a: str, b: str, a_variant: str | None = None, b_variant: str | None = None, metric: str | None = None,
            session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> CompareOut:
    return service.compare_runs(session, principal, a, b, a_variant=a_variant, b_variant=b_variant, metric=metric)


@_trails.get("/projects/{slug}/settings", response_model=SettingsOut)
def get_settings(slug: str, session: Session = SessionDep,
                 principal: Principal = Depends(get_principal)) -> SettingsOut:
    project = projects.get_visible(session, principal, slug)
    return SettingsOut(analysis=load(project.settings).model_dump())


@_trails.patch("/projects/{slug}/settings", response_model=SettingsOut)
def patch_settings(slug: str, body: AnalysisSettings, session: Session = SessionDep,
                   principal: Principal = Depends(get_principal)) -> SettingsOut:
    """Replace the project's analysis settings (admin). Trails are re-analysed from scratch with the
    next run, since the stored analyses depend on the settings."""
    project = projects.get_visible(session, principal, slug)
    principal.require(project, "admin")
    project.settings = {**(project.settings or {}), "analysis": body.model_dump()}
    return SettingsOut(analysis=body.model_dump())


# Trails, overheads, comparisons and settings (alerts, annotations and webhooks have their own router).
router = _trails

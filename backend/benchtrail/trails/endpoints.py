from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request, Response
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal

from benchtrail.auth.dependencies import TokenDep, get_principal
from benchtrail.db_boundary import request_session
from benchtrail.http_cache import NOT_MODIFIED, remembered_read
from benchtrail.openapi import ID, errors
from benchtrail.projects import service as projects
from benchtrail.runs import service as runs
from benchtrail.trails import service, window
from benchtrail.trails.schemas import CompareOut, OverheadTrail, RunOverheads, SettingsOut, TrailDetail, TrailList
from benchtrail.trails.settings import AB_METRIC_DESCRIPTION, AB_METRICS, TRAIL_METRICS, AnalysisSettings, load

_trails = APIRouter(prefix="/api/v1", tags=["trails"])
# A metric a trail follows (422 for any other); the enum in the document is the server's own list.
METRIC = {"description": "A metric of the catalog (benchtrail.metrics) that trails follow",
          "json_schema_extra": {"enum": sorted(TRAIL_METRICS)}}
# A metric an A/B comparison answers: the trail metrics and the error rate (422 for any other).
AB_METRIC = {"description": AB_METRIC_DESCRIPTION, "json_schema_extra": {"enum": sorted(AB_METRICS)}}
SessionDep = Depends(request_session, scope="function")


@_trails.get("/projects/{slug}/trails", response_model=TrailList)
def list_trails(slug: str, scenario: str | None = None, variant: str | None = None,
                load_key: str | None = Query(default=None, alias="load"), mode: str | None = None,
                environment: str | None = Query(default=None, description="Environment fingerprint"),
                session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> TrailList:
    """The project's trails, each identified by environment fingerprint, scenario, load, variant, mode (and
    process); filter by `scenario`, `variant`, `load`, `mode`."""
    return TrailList(items=service.list_trails(session, principal, slug, scenario=scenario, variant=variant,
                                               load=load_key, mode=mode, environment=environment))


async def trail_page(
    before: str | None = Query(default=None, max_length=16, description="A run's slug: answer the points before it "
                                                        "(the `earlier` of the previous answer)"),
    limit: int = Query(default=window.DEFAULT_LIMIT, ge=1, le=window.MAX_LIMIT,
                       description="Points in the window: the newest ones, or those just before `before`"),
    max_points: int | None = Query(default=None, ge=10, le=window.MAX_LIMIT,
                                   description="Thin the window to about this many points for a chart, "
                                               "keeping change points, alerted runs and extremes"),
) -> service.Page:
    """Async, like every dependency of a hot read: a sync one costs a worker-thread hop per request (the trail
    reads answered 1,674 and 1,735 req/s with it, 2,073 and 2,301 without, against 2,218-2,383 for the run document)."""
    return service.Page(before=before, limit=limit, max_points=max_points)


@_trails.get("/trails/{trail_id}", response_model=TrailDetail, responses=NOT_MODIFIED)
async def get_trail(trail_id: ID, request: Request, metric: str = Query(default="latency_p75", **METRIC),
                    page: service.Page = Depends(trail_page), token: str | None = TokenDep) -> Response:
    """A trail in version order, one window at a time (`before`, `limit`), optionally thinned for a chart."""
    return await remembered_read(request, token, service.head(trail_id),
                                 lambda session, principal: service.trail_detail(
                                     session, principal, trail_id, metric, page))


@_trails.get("/trails/{trail_id}/overhead", response_model=OverheadTrail, responses=NOT_MODIFIED)
async def get_overhead_trail(trail_id: ID, request: Request, metric: str = Query(default="latency_p75", **METRIC),
                             page: service.Page = Depends(trail_page), token: str | None = TokenDep) -> Response:
    """The overhead trail in version order, windowed and thinned like the trail."""
    return await remembered_read(request, token, service.head(trail_id),
                                 lambda session, principal: service.overhead_trail(
                                     session, principal, trail_id, metric, page))


@_trails.get("/runs/{slug}/overheads", response_model=RunOverheads, responses=NOT_MODIFIED)
async def get_run_overheads(slug: str, request: Request, metric: str = Query(default="latency_p75", **AB_METRIC),
                            token: str | None = TokenDep) -> Response:
    """Per cell: variant minus reference with a 95% interval, p-value, `p_adjusted` over every item of the answer
    (Benjamini-Hochberg), Cliff's delta, verdict, minimum detectable effect, `method`, and the per-repetition
    values behind them (`repetitions`: each side's value per repetition with its execution position). Answers
    carry an `ETag`."""
    return await remembered_read(request, token, runs.head(slug),
                                 lambda session, principal: service.run_overheads(session, principal, slug, metric))


@_trails.get("/compare", response_model=CompareOut, responses=errors(404, e404="Run a or b not found, or it has no such variant"))
def compare(a: str, b: str, a_variant: str | None = None, b_variant: str | None = None,
            metric: str | None = Query(default=None, **AB_METRIC),
            session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> CompareOut:
    """Two runs (or two variants across runs) cell by cell: run b minus run a with a 95% interval, p-value,
    `p_adjusted` over every item of the answer (Benjamini-Hochberg), a plain-words verdict and the per-
    repetition values behind them."""
    return service.compare_runs(session, principal, a, b, a_variant=a_variant, b_variant=b_variant, metric=metric)


@_trails.get("/projects/{slug}/settings", response_model=SettingsOut)
def get_settings(slug: str, session: Session = SessionDep,
                 principal: Principal = Depends(get_principal)) -> SettingsOut:
    """The project's analysis settings: metrics analysed, thresholds per metric, confirm-before-alert for scheduled
    runs."""
    project = projects.get_visible(session, principal, slug)
    return SettingsOut(analysis=load(project.settings).model_dump())


@_trails.patch("/projects/{slug}/settings", response_model=SettingsOut, responses=errors(403))
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

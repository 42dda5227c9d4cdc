from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal

from benchtrail.auth.dependencies import get_principal
from benchtrail.db_boundary import request_session
from benchtrail.http_cache import cached_bytes, cached_json
from benchtrail.models import Project
from benchtrail.openapi import ID, INT4_MAX, errors
from benchtrail.sharing import charts, service
from benchtrail.sharing.schemas import CompareSpec, HistorySpec, SnapshotCreate, SnapshotOut
from benchtrail.trails import service as trails
from benchtrail.trails.endpoints import AB_METRIC, trail_page
from benchtrail.trails.settings import AB_METRICS, METRIC_DESCRIPTION, TRAIL_METRICS

router = APIRouter(prefix="/api/v1", tags=["sharing"])
SessionDep = Depends(request_session, scope="function")
IMAGE: dict[int | str, dict[str, Any]] = {200: {"content": {"image/svg+xml": {"schema": {"type": "string"}},
                           "image/png": {"schema": {"type": "string", "format": "binary"}}},
               "description": "The image (svg or png as the path's extension says), with an ETag; Cache-Control "
                              "public, max-age=300 for a public project, private, no-cache otherwise"},
         304: {"description": "Not modified: the ETag sent in If-None-Match is current"}}
METRIC_QUERY: dict[str, Any] = {"description": METRIC_DESCRIPTION, "json_schema_extra": {"enum": sorted(TRAIL_METRICS)}}
MetricPath = Path(description="A metric of the catalog, e.g. latency_p75, throughput, cpu_pct, score",
                  json_schema_extra={"enum": sorted(TRAIL_METRICS)})
ImageFormat = Path(pattern="^(svg|png)$", description="svg or png")


def _image(request: Request, body: bytes, fmt: str, project: Project) -> Response:
    return cached_bytes(request, body, charts.MEDIA_TYPES[fmt], public=project.is_public, max_age=300)


@router.get("/runs/{slug}/charts/percentiles.{fmt}", response_class=Response,
            responses={**IMAGE, **errors(404, e404="No visible run with that slug, no such load level in it, "
                                                   "or no latency histogram to draw")})
def run_percentile_chart(request: Request, slug: str, fmt: str = ImageFormat,
                         load: int | None = Query(default=None, ge=1, le=INT4_MAX,
                                                  description="A load level's id (the run's `loads[].id`); "
                                                              "default: every load level"),
                         session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """The run page's latency percentile spectrum: each variant's percentiles (GET /runs/{slug}/percentiles)
    per scenario, the tail stretched out (x = 1/(1 − p)), the p99.9 value written at each line's end."""
    body, project = service.percentile_chart(session, principal, slug, load, fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)


@router.get("/runs/{slug}/charts/series.{fmt}", response_class=Response,
            responses={**IMAGE, **errors(404, e404="No visible run with that slug, no such load level in it, or no "
                                                   "series of that metric for the whole load level")})
def run_series_chart(request: Request, slug: str, fmt: str = ImageFormat,
                     metric: str = Query(min_length=1, max_length=64, pattern="^[a-z][a-z0-9_]*$",
                                         description="A series metric of the run (GET /runs/{slug}/series), e.g. "
                                                     "throughput, cpu_pct, rss_mb"),
                     load: int = Query(ge=1, le=INT4_MAX, description="A load level's id (the run's `loads[].id`)"),
                     session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """The run page's "Over time" chart of one load level: the metric's series of every variant (and
    named process) over the load level, each line ending with its mean (and, for throughput, the
    requests it counts)."""
    body, project = service.series_chart(session, principal, slug, metric, load, fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)


@router.get("/runs/{slug}/charts/{metric}.{fmt}", response_class=Response,
            responses={**IMAGE, **errors(404, e404="No visible run with that slug, or it has no value of the metric")})
def run_chart(request: Request, slug: str, metric: str = MetricPath, fmt: str = ImageFormat,
              session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """A run's metric as horizontal grouped bars (one row per scenario and load, one bar per variant),
    drawn on the server: embed it in a README with `![](<this URL>)`."""
    body, project = service.run_chart(session, principal, slug, trails.checked_metric(metric), fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)


@router.get("/compare/chart.{fmt}", response_class=Response,
            responses={**IMAGE, **errors(404, e404="Run a or b not found, it has no such variant, or the runs have "
                                                   "no cell in common with a relative change")})
def compare_chart(request: Request, fmt: str = ImageFormat,
                  a: str = Query(min_length=1, max_length=16, description="Slug of run a"),
                  b: str = Query(min_length=1, max_length=16, description="Slug of run b"),
                  metric: str = Query(default="latency_p75", **AB_METRIC),
                  a_variant: str | None = Query(default=None, min_length=1, max_length=200),
                  b_variant: str | None = Query(default=None, min_length=1, max_length=200),
                  session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """The compare page's chart: run b against run a cell by cell (GET /compare), the change in percent of
    run a with the 95% interval of the difference, the change written at each bar."""
    # The query is validated by its declaration, as GET /compare's (a slug with a control character is
    # simply not found there too); the body model's storable-string checks are for bodies.
    spec = CompareSpec.model_construct(a=a, b=b, metric=trails.checked_metric(metric, AB_METRICS), a_variant=a_variant,
                                       b_variant=b_variant)
    body, projects = service.compare_chart(session, principal, spec, fmt)  # type: ignore[arg-type]
    return cached_bytes(request, body, charts.MEDIA_TYPES[fmt], public=all(p.is_public for p in projects), max_age=300)


@router.get("/trails/{trail_id}/chart.{fmt}", response_class=Response,
            responses={**IMAGE, **errors(404, e404="No visible trail with that id, no point of the metric on it, "
                                                   "or `before` is not one of its runs")})
def trail_chart(request: Request, trail_id: ID, fmt: str = ImageFormat,
                metric: str = Query(default="latency_p75", **METRIC_QUERY),
                kind: Literal["trail", "overhead"] = Query(default="trail", description="The trail's values, or its "
                                                                                       "overhead vs the reference"),
                page: trails.Page = Depends(trail_page), session: Session = SessionDep,
                principal: Principal = Depends(get_principal)) -> Response:
    """The History page's chart of one trail (GET /trails/{id}) or its overhead (GET /trails/{id}/overhead):
    runs in version order, JMH errors as error bars, the overhead's 95% interval as a band, change points
    and alerts marked, each value written above its point while there are at most 40."""
    spec = HistorySpec.model_construct(trail=trail_id, metric=trails.checked_metric(metric), kind=kind)
    body, project = service.trail_chart(session, principal, spec, page, fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)


@router.get("/trails/{trail_id}/badge.svg", response_class=Response, responses=IMAGE)
def trail_badge(request: Request, trail_id: ID, metric: str = Query(default="latency_p75", json_schema_extra={
                    "enum": sorted(TRAIL_METRICS)}),
                session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """A badge with the trail's latest overhead (variant vs reference of the newest run) and its interval."""
    body, project = service.trail_badge(session, principal, trail_id, trails.checked_metric(metric))
    return cached_bytes(request, body, charts.MEDIA_TYPES["svg"], public=project.is_public, max_age=300)


@router.post("/snapshots", response_model=SnapshotOut, status_code=201,
             responses=errors(403, 404, e404="No visible run (or run a/b, or trail) with that slug or id"))
def create_snapshot(body: SnapshotCreate, session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> SnapshotOut:
    """Freeze a view under a permalink of its own that never changes, with its Markdown table: a run
    (`run`: its document and overheads), a comparison (`compare`: GET /compare and both runs) or a
    history (`history`: one trail or its overhead trail). Needs a token of the project(s) shown."""
    return service.create_snapshot(session, principal, body)


@router.get("/snapshots/{slug}", response_model=SnapshotOut)
def get_snapshot(request: Request, slug: str, session: Session = SessionDep,
                 principal: Principal = Depends(get_principal)) -> Response:
    """A frozen view: its data as it was when frozen, its view state and title. Never changed by later analysis or
    settings; a private project's snapshot is 404 without a token of it."""
    snapshot, project = service.get_snapshot(session, principal, slug)
    return cached_json(request, snapshot, public=project.is_public)


@router.get("/snapshots/{slug}/markdown", response_class=Response,
            responses={200: {"content": {"text/markdown": {}}, "description": "The frozen tables"}})
def snapshot_markdown(slug: str, session: Session = SessionDep,
                      principal: Principal = Depends(get_principal)) -> Response:
    """The frozen view as a Markdown table (seed-shaped a / b / diff cells; compare: Δ%, interval and verdict per
    cell; history: one row per run)."""
    snapshot, _ = service.get_snapshot(session, principal, slug)
    return Response(snapshot.markdown, media_type="text/markdown; charset=utf-8")


@router.get("/snapshots/{slug}/chart.{fmt}", response_class=Response,
            responses={**IMAGE, **errors(404, e404="No visible snapshot with that slug, or it is a run snapshot "
                                                   "(whose charts are /charts/{metric}.svg)")})
def snapshot_view_chart(request: Request, slug: str, fmt: str = ImageFormat, session: Session = SessionDep,
                        principal: Principal = Depends(get_principal)) -> Response:
    """The chart of a frozen compare or history view, drawn from the frozen data: it never changes."""
    body, project = service.snapshot_view_chart(session, principal, slug, fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)


@router.get("/snapshots/{slug}/charts/{metric}.{fmt}", response_class=Response,
            responses={**IMAGE, **errors(404, e404="No visible snapshot with that slug, it is not a run snapshot, "
                                                   "or the run has no value of the metric")})
def snapshot_chart(request: Request, slug: str, metric: str = MetricPath, fmt: str = ImageFormat,
                   session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """A chart of the frozen data: the same image as when the snapshot was taken."""
    body, project = service.snapshot_chart(session, principal, slug, trails.checked_metric(metric), fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)

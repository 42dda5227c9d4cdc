from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal, get_principal
from benchtrail.db_boundary import request_session
from benchtrail.errors import InvalidRequest
from benchtrail.http_cache import cached_bytes, cached_json
from benchtrail.models import Project
from benchtrail.openapi import ID, errors
from benchtrail.sharing import charts, service
from benchtrail.sharing.schemas import SnapshotCreate, SnapshotOut
from benchtrail.trails.settings import TRAIL_METRICS

router = APIRouter(prefix="/api/v1", tags=["sharing"])
SessionDep = Depends(request_session, scope="function")
IMAGE = {200: {"content": {"image/svg+xml": {}, "image/png": {}}, "description": "The image"},
         304: {"description": "Not modified: the ETag sent in If-None-Match is current"}}
MetricPath = Path(description="A metric of the catalog, e.g. latency_p75, throughput, cpu_pct, score",
                  json_schema_extra={"enum": sorted(TRAIL_METRICS)})
ImageFormat = Path(pattern="^(svg|png)$", description="svg or png")


def _metric(metric: str) -> str:
    if metric not in TRAIL_METRICS:
        raise InvalidRequest(f"unknown metric '{metric}'; known: {', '.join(sorted(TRAIL_METRICS))}")
    return metric


def _image(request: Request, body: bytes, fmt: str, project: Project) -> Response:
    return cached_bytes(request, body, charts.MEDIA_TYPES[fmt], public=project.is_public, max_age=300)


@router.get("/runs/{slug}/charts/{metric}.{fmt}", response_class=Response, responses=IMAGE)
def run_chart(request: Request, slug: str, metric: str = MetricPath, fmt: str = ImageFormat,
              session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """A run's metric as horizontal grouped bars (one row per scenario and load, one bar per variant),
    drawn on the server: embed it in a README with `![](<this URL>)`."""
    body, project = service.run_chart(session, principal, slug, _metric(metric), fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)


@router.get("/trails/{trail_id}/badge.svg", response_class=Response, responses=IMAGE)
def trail_badge(request: Request, trail_id: ID, metric: str = Query(default="latency_p75", json_schema_extra={
                    "enum": sorted(TRAIL_METRICS)}),
                session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """A badge with the trail's latest overhead (variant vs reference of the newest run) and its interval."""
    body, project = service.trail_badge(session, principal, trail_id, _metric(metric))
    return cached_bytes(request, body, charts.MEDIA_TYPES["svg"], public=project.is_public, max_age=300)


@router.post("/snapshots", response_model=SnapshotOut, status_code=201,
             responses=errors(403, 404, e404="No visible run with that slug"))
def create_snapshot(body: SnapshotCreate, session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> SnapshotOut:
    """Freeze a run's view: its run document and overheads as they are now, under a permalink of its own
    that never changes, with the seed-shaped Markdown tables. Needs a token of the run's project."""
    return service.create_snapshot(session, principal, body)


@router.get("/snapshots/{slug}", response_model=SnapshotOut)
def get_snapshot(request: Request, slug: str, session: Session = SessionDep,
                 principal: Principal = Depends(get_principal)) -> Response:
    snapshot, project = service.get_snapshot(session, principal, slug)
    return cached_json(request, snapshot, public=project.is_public)


@router.get("/snapshots/{slug}/markdown", response_class=Response,
            responses={200: {"content": {"text/markdown": {}}, "description": "The frozen tables"}})
def snapshot_markdown(slug: str, session: Session = SessionDep,
                      principal: Principal = Depends(get_principal)) -> Response:
    snapshot, _ = service.get_snapshot(session, principal, slug)
    return Response(snapshot.markdown, media_type="text/markdown; charset=utf-8")


@router.get("/snapshots/{slug}/charts/{metric}.{fmt}", response_class=Response, responses=IMAGE)
def snapshot_chart(request: Request, slug: str, metric: str = MetricPath, fmt: str = ImageFormat,
                   session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> Response:
    """A chart of the frozen data: the same image as when the snapshot was taken."""
    body, project = service.snapshot_chart(session, principal, slug, _metric(metric), fmt)  # type: ignore[arg-type]
    return _image(request, body, fmt, project)

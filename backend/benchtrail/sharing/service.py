"""Sharing: frozen snapshots of a view, and images of a run's charts and of a trail's latest overhead."""

from __future__ import annotations

import secrets
from typing import Any

from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import NotFound
from benchtrail.models import Project, Snapshot
from benchtrail.runs import service as runs
from benchtrail.sharing import charts, repository, tables
from benchtrail.sharing.schemas import SnapshotCreate, SnapshotOut, SnapshotView
from benchtrail.trails import service as trails

# The overheads frozen with a run: what its lead table and charts show.
SNAPSHOT_METRICS = ("latency_p75", "latency_mean", "throughput", "cpu_pct", "heap_mb", "score")


def run_data(session: Session, principal: Principal, slug: str) -> tuple[dict[str, Any], Project]:
    detail, project = runs.detail(session, principal, slug)
    run = detail.model_dump(mode="json")
    present = {m for c in run["cells"] for m in SNAPSHOT_METRICS if c.get(m) is not None}
    overheads = {m: trails.run_overheads(session, principal, slug, m).model_dump(mode="json")
                 for m in SNAPSHOT_METRICS if m in present}
    return {"run": run, "overheads": overheads}, project


def create_snapshot(session: Session, principal: Principal, body: SnapshotCreate) -> SnapshotOut:
    data, project = run_data(session, principal, body.run)
    principal.require(project, "viewer")
    run = data["run"]
    title = body.title or f"{project.slug} run {run['slug']}" + (
        f" (agent {run['agent_version']})" if run.get("agent_version") else "")
    snapshot = repository.add(session, Snapshot(
        slug=secrets.token_urlsafe(8), project_id=project.id, kind="run", title=title, view=body.view.model_dump(), data=data,
        markdown=tables.run_markdown(run, data["overheads"]), created_by=principal.name))
    return _out(snapshot, project)


def get_snapshot(session: Session, principal: Principal, slug: str) -> tuple[SnapshotOut, Project]:
    snapshot = repository.by_slug(session, slug)
    project = session.get(Project, snapshot.project_id) if snapshot else None
    if snapshot is None or project is None or not principal.can_see(project):
        raise NotFound(f"snapshot '{slug}' not found")
    return _out(snapshot, project), project


def run_chart(session: Session, principal: Principal, slug: str, metric: str,
              fmt: charts.Format) -> tuple[bytes, Project]:
    detail, project = runs.detail(session, principal, slug)
    return _chart(detail.model_dump(mode="json"), metric, fmt), project


def snapshot_chart(session: Session, principal: Principal, slug: str, metric: str,
                   fmt: charts.Format) -> tuple[bytes, Project]:
    snapshot, project = get_snapshot(session, principal, slug)
    return _chart(snapshot.data["run"], metric, fmt), project


def trail_badge(session: Session, principal: Principal, trail_id: int, metric: str) -> tuple[bytes, Project]:
    trail = trails.overhead_trail(session, principal, trail_id, metric, trails.Page(limit=1))
    _, project = trails.get_trail(session, principal, trail_id)
    latest = trail.points[-1].model_dump() if trail.points else None
    return charts.overhead_badge(metric, latest), project


def _chart(run: dict[str, Any], metric: str, fmt: charts.Format) -> bytes:
    try:
        return charts.run_chart(run, metric, fmt)
    except charts.NoData as exc:
        raise NotFound(str(exc)) from None


def _out(s: Snapshot, project: Project) -> SnapshotOut:
    return SnapshotOut(slug=s.slug, project=project.slug, kind="run", title=s.title, view=SnapshotView(**s.view), data=s.data,
                       markdown=s.markdown, created_by=s.created_by, created_at=s.created_at,
                       permalink=f"{get_settings().public_url.rstrip('/')}/s/{s.slug}")

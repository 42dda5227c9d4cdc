"""Sharing: frozen snapshots of a view (run, compare, history), and images of every chart those views
show. The numbers drawn and frozen are the JSON API's own answers (runs.detail, trails.compare_runs,
trails.trail_detail / overhead_trail, runs.percentiles): nothing is computed a second time here."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from benchtrail import metrics as metric_catalog
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import NotFound
from benchtrail.models import Project, Snapshot
from benchtrail.runs import service as runs
from benchtrail.sharing import charts, repository, tables
from benchtrail.sharing.schemas import CompareSpec, HistorySpec, SnapshotCreate, SnapshotOut, SnapshotView
from benchtrail.trails import service as trails
from benchtrail.trails import window

# What the History page asks for (features/history/api/queries.ts): the whole trail, thinned past 5,000 points.
HISTORY_PAGE = trails.Page(limit=window.MAX_LIMIT, max_points=5000)

# The overheads frozen with a run: what its lead table and charts show.
SNAPSHOT_METRICS = metric_catalog.names("chart")


def run_data(session: Session, principal: Principal, slug: str) -> tuple[dict[str, Any], Project]:
    detail, project = runs.detail(session, principal, slug)
    run = detail.model_dump(mode="json")
    present = {m for c in run["cells"] for m in SNAPSHOT_METRICS if c.get(m) is not None}
    overheads = {m: trails.run_overheads(session, principal, slug, m).model_dump(mode="json")
                 for m in SNAPSHOT_METRICS if m in present}
    return {"run": run, "overheads": overheads}, project


def compare_data(session: Session, principal: Principal, spec: CompareSpec) -> tuple[dict[str, Any], list[Project]]:
    a, project_a = runs.detail(session, principal, spec.a)
    b, project_b = runs.detail(session, principal, spec.b)
    compared = trails.compare_runs(session, principal, spec.a, spec.b, a_variant=spec.a_variant,
                                   b_variant=spec.b_variant, metric=spec.metric)
    return ({"compare": compared.model_dump(mode="json"), "a": a.model_dump(mode="json"),
             "b": b.model_dump(mode="json"), "metric": spec.metric}, [project_a, project_b])


def history_data(session: Session, principal: Principal, spec: HistorySpec,
                 page: trails.Page = HISTORY_PAGE) -> tuple[dict[str, Any], Project]:
    read = trails.overhead_trail if spec.kind == "overhead" else trails.trail_detail
    answer = read(session, principal, spec.trail, spec.metric, page)
    _, project = trails.get_trail(session, principal, spec.trail)
    return {"trail": answer.model_dump(mode="json"), "kind": spec.kind}, project


def create_snapshot(session: Session, principal: Principal, body: SnapshotCreate) -> SnapshotOut:
    slug = secrets.token_urlsafe(8)
    permalink = _permalink(slug)
    if body.compare is not None:
        data, projects = compare_data(session, principal, body.compare)
        for p in projects:
            principal.require(p, "viewer")
        project = projects[0]
        a, b = data["a"], data["b"]
        title = body.title or f"{project.slug}: {_metric_title(data['metric'])} run {a['slug']} → run {b['slug']}"
        markdown = tables.compare_markdown(data["compare"], a, b, data["metric"], permalink)
    elif body.history is not None:
        data, project = history_data(session, principal, body.history)
        principal.require(project, "viewer")
        t = data["trail"]["trail"]
        title = body.title or (f"{project.slug}: {'overhead of ' if data['kind'] == 'overhead' else ''}"
                               f"{_metric_title(data['trail']['metric'])} history of {tables.scenario_name({'name': t['scenario']})}"
                               f" · {t['load_label'] or t['load_key']} · {t['variant']}")
        markdown = tables.trail_markdown(data["trail"], data["kind"], permalink)
    else:
        assert body.run is not None
        data, project = run_data(session, principal, body.run)
        principal.require(project, "viewer")
        run = data["run"]
        title = body.title or f"{project.slug} run {run['slug']}" + (
            f" (agent {run['agent_version']})" if run.get("agent_version") else "")
        markdown = tables.run_markdown(run, data["overheads"])
    snapshot = repository.add(session, Snapshot(
        slug=slug, project_id=project.id, kind=body.kind, title=title[:300], view=body.view.model_dump(), data=data,
        markdown=markdown, created_by=principal.name))
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
    if snapshot.kind != "run":
        raise NotFound(f"snapshot '{slug}' is a {snapshot.kind} view: its chart is /snapshots/{slug}/chart.{fmt}")
    return _chart(snapshot.data["run"], metric, fmt), project


def snapshot_view_chart(session: Session, principal: Principal, slug: str, fmt: charts.Format) -> tuple[bytes, Project]:
    """The one chart of a frozen compare or history view, drawn from the frozen answers."""
    snapshot, project = get_snapshot(session, principal, slug)
    data = snapshot.data
    if snapshot.kind == "compare":
        return _drawn(lambda: charts.compare_chart(data["compare"], _compare_title(data), fmt)), project
    if snapshot.kind == "history":
        return _drawn(lambda: charts.trail_chart(data["trail"], data["kind"], fmt)), project
    raise NotFound(f"snapshot '{slug}' is a run view: its charts are /snapshots/{slug}/charts/{{metric}}.{fmt}")


def compare_chart(session: Session, principal: Principal, spec: CompareSpec,
                  fmt: charts.Format) -> tuple[bytes, list[Project]]:
    data, projects = compare_data(session, principal, spec)
    return _drawn(lambda: charts.compare_chart(data["compare"], _compare_title(data), fmt)), projects


def trail_chart(session: Session, principal: Principal, spec: HistorySpec, page: trails.Page,
                fmt: charts.Format) -> tuple[bytes, Project]:
    data, project = history_data(session, principal, spec, page)
    return _drawn(lambda: charts.trail_chart(data["trail"], data["kind"], fmt)), project


def _run_at_load(session: Session, principal: Principal, slug: str,
                 load_id: int | None) -> tuple[dict[str, Any], Project]:
    """The run document, checked to have the load level asked for (None: every load level)."""
    detail, project = runs.detail(session, principal, slug)
    run = detail.model_dump(mode="json")
    if load_id is not None and load_id not in {ld["id"] for ld in run["loads"]}:
        raise NotFound(f"run '{slug}' has no load level {load_id}; its loads: "
                       + ", ".join(f"{ld['id']} ({ld['label']})" for ld in run["loads"]))
    return run, project


def percentile_chart(session: Session, principal: Principal, slug: str, load_id: int | None,
                     fmt: charts.Format) -> tuple[bytes, Project]:
    run, project = _run_at_load(session, principal, slug, load_id)
    spectrum = [c.model_dump(mode="json") for c in runs.percentiles(session, principal, slug, [])]
    return _drawn(lambda: charts.percentile_chart(run, spectrum, load_id, fmt)), project


def series_chart(session: Session, principal: Principal, slug: str, metric: str, load_id: int,
                 fmt: charts.Format) -> tuple[bytes, Project]:
    run, project = _run_at_load(session, principal, slug, load_id)
    items, _ = runs.series(session, principal, slug, metric)
    series = [s.model_dump(mode="json") for s in items]
    return _drawn(lambda: charts.series_chart(run, series, metric, load_id, fmt)), project


def trail_badge(session: Session, principal: Principal, trail_id: int, metric: str) -> tuple[bytes, Project]:
    trail = trails.overhead_trail(session, principal, trail_id, metric, trails.Page(limit=1))
    _, project = trails.get_trail(session, principal, trail_id)
    latest = trail.points[-1].model_dump() if trail.points else None
    return charts.overhead_badge(metric, latest), project


def _chart(run: dict[str, Any], metric: str, fmt: charts.Format) -> bytes:
    return _drawn(lambda: charts.run_chart(run, metric, fmt))


def _drawn(draw: Callable[[], bytes]) -> bytes:
    try:
        return draw()
    except charts.NoData as exc:
        raise NotFound(str(exc)) from None


def _metric_title(metric: str) -> str:
    return "Score" if metric == "score" else metric_catalog.get(metric).title


def _compare_title(data: dict[str, Any]) -> str:
    a, b = data["a"], data["b"]

    def side(r: dict[str, Any]) -> str:
        return f"run {r['slug']}" + (f" ({r['agent_version']})" if r.get("agent_version") else "")

    return f"{_metric_title(data['metric'])}: {side(a)} → {side(b)}"


def _permalink(slug: str) -> str:
    return f"{get_settings().public_url.rstrip('/')}/s/{slug}"


def _out(s: Snapshot, project: Project) -> SnapshotOut:
    return SnapshotOut(slug=s.slug, project=project.slug, kind=s.kind, title=s.title, view=SnapshotView(**s.view),  # type: ignore[arg-type]
                       data=s.data, markdown=s.markdown, created_by=s.created_by, created_at=s.created_at,
                       permalink=_permalink(s.slug))

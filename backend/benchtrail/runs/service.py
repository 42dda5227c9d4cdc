from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Any

from cachetools import LRUCache
from sqlalchemy.orm import Session

from benchtrail.alerts.service import raised_by
from benchtrail.auth.principal import Principal
from benchtrail.errors import ErrorCode, InvalidRequest
from benchtrail import metrics
from benchtrail.ingest.histogram import percentile_ms
from benchtrail.ingest.values import derived, value_of
from benchtrail.models import Cell, Environment, Project, Run
from benchtrail.projects import service as projects
from benchtrail.revisions import HeadQuery
from benchtrail.runstate import meta as run_meta
from benchtrail.runs import repository
from benchtrail.runstate.access import get_visible_run
from benchtrail.runstate.summary import summary
from benchtrail.runstate import shares
from benchtrail.runs.schemas import (CellOut, CellPercentiles, EnvironmentOut, LoadOut, PercentilePoint,
                                     ProcessCellOut, RunDetail, RunFileOut, RunPage, ScenarioOut, SeriesOut,
                                     ShareOut,
                                     VariantOut)

SPECTRUM = (0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0)


def head(slug: str) -> HeadQuery:
    """id, is_public and revision of the run's project (`http_cache.remembered_read`)."""
    return repository.head(slug)


CURSOR = r"^[0-9]{1,16}_[0-9]{1,18}$"   # microseconds since 1970 _ run id: every such string is a position


def _cursor(run: Run) -> str:
    created = run.created_at
    micros = (created - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)
    return f"{micros}_{run.id}"


def _after(cursor: str) -> tuple[datetime, int]:
    micros, _, run_id = cursor.partition("_")
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=int(micros)), int(run_id)


def list_runs(session: Session, principal: Principal, project_slug: str, *, environment: str | None,
              agent_version: str | None, branch: str | None, status: str | None, labels: list[str],
              page: int, per_page: int, cursor: str | None = None) -> RunPage:
    project = projects.get_visible(session, principal, project_slug)
    label_filter = {}
    for item in labels:
        key, sep, value = item.partition(":")
        if not sep:
            raise InvalidRequest(f"label filter '{item}' must be key:value", code=ErrorCode.LABEL_FILTER_INVALID)
        label_filter[key] = value
    rows, total = repository.page(
        session, project.id,
        filters={"environment": environment, "agent_version": agent_version, "branch": branch, "status": status},
        labels=label_filter, offset=(page - 1) * per_page, limit=per_page,
        after=_after(cursor) if cursor else None)
    more = len(rows) == per_page
    return RunPage(items=[summary(row, project, row.environment_name) for row in rows], total=total, page=page,
                   per_page=per_page, next_cursor=_cursor(rows[-1]) if rows and more else None)


# The catalog's metrics computed from a cell's histogram rather than kept in a column of their own.
DERIVED = tuple(name for name in metrics.CATALOG if derived(name))


def cell_out(c: Cell, has_histogram: bool) -> CellOut:
    error_rate = (100.0 * c.errors / c.count) if c.count and c.errors is not None else None
    return CellOut(
        id=c.id, variant_id=c.variant_id, scenario_id=c.scenario_id, load_id=c.load_id, trail_id=c.trail_id,
        mode=c.mode, source=c.source, is_transaction=c.is_transaction, count=c.count, errors=c.errors,
        error_rate=error_rate, throughput=c.throughput, duration_s=c.duration_s, latency_mean=c.latency_mean,
        latency_min=c.latency_min, latency_max=c.latency_max, latency_p50=c.latency_p50,
        latency_p75=c.latency_p75, latency_p90=c.latency_p90, latency_p95=c.latency_p95,
        latency_p99=c.latency_p99, latency_p999=c.latency_p999, has_histogram=has_histogram,
        cpu_pct=c.cpu_pct, cpu_s_per_1k=c.cpu_s_per_1k, rss_mb=c.rss_mb, heap_mb=c.heap_mb,
        achieved_rate=c.achieved_rate, score=c.score, score_error=c.score_error, score_unit=c.score_unit,
        params=c.params or {}, replicates=c.replicates or [], extra=c.extra or {},
        **{name: value_of(c, name) for name in DERIVED})


def process_cell_out(c: Cell) -> ProcessCellOut:
    reps = (c.extra or {}).get("repetitions_reported") or []
    keys = ("cpu_pct", "cpu_s_per_1k", "rss_mb", "heap_mb")
    return ProcessCellOut(
        id=c.id, variant_id=c.variant_id, load_id=c.load_id, trail_id=c.trail_id, process=c.process,
        cpu_pct=c.cpu_pct, cpu_s_per_1k=c.cpu_s_per_1k, rss_mb=c.rss_mb, heap_mb=c.heap_mb,
        repetitions=[{k: float(r[k]) for k in keys if isinstance(r.get(k), (int, float))} for r in reps])


# The measured part of a completed run (environment, variants, scenarios, loads, cells, files) changes
# only when the run is measured again from its files (`remeasured_at`): ingest writes it in the transaction
# that completes the run, a re-ingest in the one that stamps the run. Each API process keeps the most
# recently read ones, so a popular run page costs two small queries instead of six.
_MEASURED: LRUCache[tuple[int, datetime | None], dict[str, Any]] = LRUCache(maxsize=256)
_MEASURED_LOCK = threading.Lock()


def _measured(session: Session, run: Run) -> dict[str, Any]:
    if run.status == "completed":
        with _MEASURED_LOCK:
            cached = _MEASURED.get((run.id, run.remeasured_at))
        if cached is not None:
            return cached
    env = session.get(Environment, run.environment_id) if run.environment_id else None
    p = repository.parts(session, run.id, with_histograms=bool(DERIVED))
    measured = dict(
        environment=env.name if env else None,
        environment_detail=EnvironmentOut.model_validate(env, from_attributes=True) if env else None,
        variants=[VariantOut(id=v.id, name=v.name, is_reference=v.is_reference) for v in p["variants"]],
        scenarios=[ScenarioOut(id=s.id, name=s.name) for s in p["scenarios"]],
        loads=[LoadOut(id=l.id, key=l.key, kind=l.kind, value=l.value, requests=l.requests,
                       duration_s=l.duration_s, label=l.label) for l in p["loads"]],
        cells=[cell_out(c, has_hist) for c, has_hist in p["cells"] if not c.process],
        process_cells=[process_cell_out(c) for c, _ in p["cells"] if c.process],
        files=[RunFileOut(id=f.id, filename=f.filename, variant=f.variant, format=f.format, size=b.size,
                          sha256=b.sha256, download_url=f"/api/v1/runs/{run.slug}/files/{f.id}/raw",
                          share=(f.options or {}).get("share"))
               for f, b in p["files"]],
    )
    if run.status == "completed":
        with _MEASURED_LOCK:
            _MEASURED[(run.id, run.remeasured_at)] = measured
    return measured


def detail(session: Session, principal: Principal, slug: str) -> tuple[RunDetail, Project]:
    run, project = get_visible_run(session, principal, slug)
    measured = _measured(session, run)
    base = summary(run, project, measured["environment"])
    return RunDetail(
        **{**base.model_dump(), **measured},
        analysis_status=run.analysis_status, alerts=raised_by(session, project, run),
        status_detail=run.status_detail, validity=run.validity or [], criteria=run.criteria or [],
        progress=run.progress or {}, meta=run_meta.of(run), remeasured_at=run.remeasured_at,
        shares=[ShareOut.model_validate(s, from_attributes=True) for s in shares.of_run(session, run.id)],
    ), project


def series(session: Session, principal: Principal, slug: str,
           metric: str | None) -> tuple[list[SeriesOut], Project]:
    run, project = get_visible_run(session, principal, slug)
    return [SeriesOut(id=s.id, variant_id=s.variant_id, scenario_id=s.scenario_id, load_id=s.load_id,
                      metric=s.metric, process=s.process, interval_ms=s.interval_ms, t_ms=s.t_ms, values=s.values)
            for s in repository.series(session, run.id, metric=metric)], project


def percentiles(session: Session, principal: Principal, slug: str,
                requested: list[float]) -> list[CellPercentiles]:
    """Any percentile of any cell with a stored histogram (exact to HDR precision)."""
    for p in requested:
        if not 0.0 <= p <= 100.0:
            raise InvalidRequest(f"percentile {p} is outside 0..100", code=ErrorCode.PERCENTILE_OUT_OF_RANGE)
    points = sorted(set(requested)) if requested else list(SPECTRUM)
    run, _ = get_visible_run(session, principal, slug)
    return [CellPercentiles(cell_id=cid, points=[PercentilePoint(percentile=p, value_ms=percentile_ms(h, p))
                                                  for p in points])
            for cid, h in repository.histograms(session, run.id)]

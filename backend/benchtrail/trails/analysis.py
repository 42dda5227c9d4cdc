"""What the `analysis.run` task does for a freshly ingested run, in the caller's transaction:

1. the run's overheads: every non-reference cell against the reference variant's cell of the same
   scenario, load and mode, for each analysed metric (stored, so overhead trails are cheap to read);
2. change points on every trail the run touches and on their overhead trails, incrementally;
3. alerts for new change points (and confirmation of scheduled runs), then webhook deliveries.

Runs of one project are analysed one at a time (a row lock on the project), so two runs arriving
together cannot both raise the same alert.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.alerts import service as alerts
from benchtrail.analysis import ChangePoint
from benchtrail.models import Cell, Project, Run, Variant
from benchtrail.runs import lifecycle
from benchtrail.runs.lifecycle import AnalysisStatus, RunStatus
from benchtrail.trails import history, overhead, repository
from benchtrail.trails.settings import AnalysisSettings, detector_settings, load, settings_key


@dataclass(slots=True)
class Finding:
    """A change point found on a trail ('trail') or an overhead trail ('overhead')."""

    trail_id: int
    metric: str
    kind: str
    change_point: ChangePoint
    points: list[history.Point]

    @property
    def culprit(self) -> history.Point:
        return self.points[self.change_point.index]


@dataclass(slots=True)
class Outcome:
    overheads: int
    trails_analysed: int
    findings: list[Finding]
    alert_ids: list[int]


def analyse_run(session: Session, run_id: int, *, force: bool = False) -> Outcome | None:
    run = session.scalar(select(Run).where(Run.id == run_id))
    if (run is None or run.status != RunStatus.COMPLETED
            or (run.analysis_status == AnalysisStatus.DONE and not force)):
        return None
    project = session.scalar(select(Project).where(Project.id == run.project_id).with_for_update())
    assert project is not None
    cfg = load(project.settings)
    cells = repository.run_cells(session, run.id)
    variants = {v.id: v for v in session.scalars(select(Variant).where(Variant.run_id == run.id))}
    rows = overhead_rows(run, cells, variants, cfg.metrics)
    repository.replace_overheads(session, run.id, rows)
    session.flush()

    trail_ids = sorted({c.trail_id for c in cells})
    findings, analysed, current = _analyse_trails(session, project, run.id, trail_ids, cfg)
    new_alerts = alerts.raise_alerts(session, project, run, findings, cfg, current)
    lifecycle.analysis_transition(run, AnalysisStatus.DONE)
    session.flush()
    return Outcome(len(rows), analysed, findings, [a.id for a in new_alerts])


def overhead_rows(run: Run, cells: list[Cell] | Any, variants: dict[int, Variant],
                  metrics: list[str]) -> list[dict[str, Any]]:
    reference = {(c.scenario_id, c.load_id, c.mode): c for c in cells if variants[c.variant_id].is_reference}
    rows = []
    for cell in cells:
        ref = reference.get((cell.scenario_id, cell.load_id, cell.mode))
        if ref is None or ref.id == cell.id:
            continue
        for metric in metrics:
            a, b = overhead.evidence(ref, metric), overhead.evidence(cell, metric)
            if a is None or b is None:
                continue
            r = overhead.ab(a, b, metric)
            detail = overhead.to_dict(r)
            rows.append(dict(run_id=run.id, trail_id=cell.trail_id, cell_id=cell.id, ref_cell_id=ref.id,
                             metric=metric, reference=r.reference, variant=r.variant, abs_diff=r.abs_diff,
                             rel_diff=detail["rel_diff"], ci_low=detail["ci_low"], ci_high=detail["ci_high"],
                             verdict=r.verdict, detail=detail))
    return rows


def overhead_value(abs_diff: float, rel_diff: float | None) -> float:
    """An overhead trail's value: the added cost in percent of the reference (so a threshold in
    percent means the same for every load level), or the absolute difference when the reference is 0."""
    return 100.0 * rel_diff if rel_diff is not None and math.isfinite(rel_diff) else abs_diff


def _analyse_trails(session: Session, project: Project, run_id: int, trail_ids: list[int],
                    cfg: AnalysisSettings) -> tuple[list[Finding], int, dict[tuple[int, str, str], float]]:
    """Findings, the number of trails analysed, and this run's value on each of them."""
    stored = repository.analyses(session, trail_ids)
    annotations, alerted = alerts.known_changes(session, project.id, trail_ids)
    series: dict[tuple[int, str, str], list[history.Point]] = defaultdict(list)
    units: dict[int, str | None] = {}
    for cell, run_row in repository.trail_cells(session, trail_ids, cfg.metrics):
        units[cell.trail_id] = cell.score_unit
        for metric in cfg.metrics:
            value = getattr(cell, metric)
            if value is not None:
                series[(cell.trail_id, metric, "trail")].append(
                    history.point(run_row, value, replicates=tuple(cell.replicates or ()) if metric == "score" else ()))
    for metric in cfg.metrics:
        for oh, run_row in repository.overhead_points(session, trail_ids, metric):
            series[(oh.trail_id, metric, "overhead")].append(
                history.point(run_row, overhead_value(oh.abs_diff, oh.rel_diff)))

    findings: list[Finding] = []
    current: dict[tuple[int, str, str], float] = {}
    for (trail_id, metric, kind), points in series.items():
        points = history.ordered(points)
        current.update({(trail_id, metric, kind): p.value for p in points if p.run_id == run_id})
        s = detector_settings(cfg, metric, units.get(trail_id))
        min_pp = s.min_magnitude_pct
        if kind == "overhead":
            # Overhead values are percent of the reference already; the threshold applies to the
            # change in percentage points, below, not to a percentage of the overhead itself.
            s = replace(s, min_magnitude_pct=0.0)
        known = history.known_indices(points, annotations, alerted.get((trail_id, metric, kind), set()))
        invalid = [p.run_id for p in points if not p.is_valid]
        key = settings_key(s, [points[i].run_id for i in known] + [-r for r in invalid])
        prev = stored.get((trail_id, metric, kind))
        same = prev is not None and prev.settings_key == key
        cps = history.detect(points, s, known, prev.run_ids if same else None,
                             prev.change_points if same else None)
        repository.save_analysis(session, trail_id, metric, kind, [p.run_id for p in points], key,
                                 [history.cp_to_json(cp, points[cp.index].run_id) for cp in cps])
        for cp in cps:
            if cp.known or cp.direction not in ("regression", "improvement"):
                continue
            if kind == "overhead" and abs(cp.magnitude_abs) < min_pp:
                continue
            findings.append(Finding(trail_id, metric, kind, cp, points))
    return findings, len(series), current

"""What the `analysis.run` task does for a freshly ingested run, in the caller's transaction:

1. the run's overheads: every non-reference cell against the reference variant's cell of the same
   scenario, load and mode, for each analysed metric (stored, so overhead trails are cheap to read);
2. on every trail the run touches, and on their overhead trails, a review of the window around the
   run's point in x-axis (version) order, whatever order runs arrived in: the points before and after
   it, read by index, re-analysed with the stored change points outside the window kept;
3. the findings handed to alerts (`alerts.service.apply_findings`), which raises, moves, withdraws or
   reinstates alerts and queues webhook deliveries.

The work per run is bounded by the window, not by the length of the trail. A trail is analysed from
scratch only when what its change points depend on changed (settings, annotations, alerts people
accepted) or when it has no stored state yet.

Analyses of runs sharing a trail are serialised by a transaction-scoped advisory lock per trail, so
two runs arriving together see each other's points and never both raise the same alert.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.alerts import service as alerts
from benchtrail.ingest.values import value_of
from benchtrail.analysis import ChangePoint, Settings
from benchtrail.models import Cell, Project, Run, Variant
from benchtrail.runstate import lifecycle
from benchtrail.runstate.lifecycle import AnalysisStatus, RunStatus
from benchtrail.trails import history, overhead, repository
from benchtrail.trails.settings import AnalysisSettings, detector_settings, load

KINDS = ("trail", "overhead")


@dataclass(slots=True)
class Outcome:
    overheads: int
    trails_analysed: int
    windows: int
    full: int
    applied: alerts.Applied

    @property
    def alert_ids(self) -> list[int]:
        return self.applied.created


def analyse_run(session: Session, run_id: int, *, force: bool = False) -> Outcome | None:
    run = session.scalar(select(Run).where(Run.id == run_id))
    if (run is None or run.status != RunStatus.COMPLETED
            or (run.analysis_status == AnalysisStatus.DONE and not force)):
        return None
    project = session.get(Project, run.project_id)
    assert project is not None
    cfg = load(project.settings)
    cells = list(repository.run_cells(session, run.id))
    variants = {v.id: v for v in session.scalars(select(Variant).where(Variant.run_id == run.id))}
    rows = overhead_rows(run, cells, variants, cfg.metrics)
    repository.replace_overheads(session, run.id, rows)
    session.flush()

    trail_cells = {c.trail_id: c for c in cells}
    repository.lock_trails(session, list(trail_cells))
    key = history.order_bytes(run.agent_version, run.started_at or run.created_at, run.id)
    repository.set_order_keys(session, [(c.id, key) for c in cells])
    bounds = alerts.boundaries(session, project.id, sorted(trail_cells))
    stored = repository.analyses(session, sorted(trail_cells))
    reviewers = [_TrailReview(run, trail_id, cell.score_unit, cfg, bounds, stored, force=force)
                 for trail_id, cell in sorted(trail_cells.items())]
    _read_rows(session, run, key, cfg.metrics, reviewers)
    findings: list[alerts.TrailFindings] = []
    states: list[dict[str, Any]] = []
    for reviewer in reviewers:
        findings += reviewer.review_all()
        states += reviewer.states
    full = sum(r.full for r in reviewers)
    repository.save_analyses(session, states)
    applied = alerts.apply_findings(session, project, run, findings, confirm_scheduled=cfg.confirm_scheduled)
    lifecycle.analysis_transition(run, AnalysisStatus.DONE)
    session.flush()
    return Outcome(len(rows), len(trail_cells), len(trail_cells) - full, full, applied)


def overhead_rows(run: Run, cells: list[Cell] | Any, variants: dict[int, Variant],
                  metrics: list[str]) -> list[dict[str, Any]]:
    reference = {(c.scenario_id, c.load_id, c.mode, c.process): c for c in cells
                 if variants[c.variant_id].is_reference}
    rows = []
    for cell in cells:
        ref = reference.get((cell.scenario_id, cell.load_id, cell.mode, cell.process))
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


def series_settings(cfg: AnalysisSettings, metric: str, kind: str, unit: str | None) -> tuple[Settings, float]:
    """Detector settings of one series, and the smallest |change| alerted in its own unit. Overhead
    values are percent of the reference already: their threshold is in percentage points of added
    cost, applied to the change itself rather than as a percentage of the overhead."""
    s = detector_settings(cfg, metric, unit)
    if kind == "overhead":
        return replace(s, min_magnitude_pct=0.0), s.min_magnitude_pct
    return s, 0.0


def window_size(s: Settings) -> tuple[int, int]:
    """Points read on each side of a new point, and how many of them at a cut edge of the window are
    context only (change points there are kept as stored, not re-judged)."""
    return max(2 * s.window, 40), max(s.window // 2, 10)


def _read_rows(session: Session, run: Run, key: bytes, metrics: list[str], reviewers: list[_TrailReview]) -> None:
    """Every trail's rows, in a few statements for the whole run: the windows of the trails reviewed around the run
    in one read, the trails analysed from scratch in another, and the overheads of every run they show in a third."""
    whole = [r for r in reviewers if r.full]
    rows = repository.trail_cells(session, [r.trail_id for r in whole], metrics) if whole else []
    keyed = [(history.point(run_row, 0.0).key, (c, run_row)) for c, run_row in rows]
    repository.set_order_keys(session, [(c.id, k) for k, (c, _) in keyed if c.order_key != k and c.run_id != run.id])
    by_trail: dict[int, list[tuple[bytes, tuple[Cell, Any]]]] = {r.trail_id: [] for r in whole}
    for k, (c, run_row) in keyed:
        by_trail[c.trail_id].append((k, (c, run_row)))
    for r in whole:
        r.set_whole(by_trail[r.trail_id])
    windowed = [r for r in reviewers if not r.full]
    windows = repository.window_cells(session, {r.trail_id: r.context + 1 for r in windowed}, key, metrics)
    for r in windowed:
        r.set_window(*windows[r.trail_id])
    overheads = repository.overheads_of_runs(session, [r.trail_id for r in reviewers],
                                             sorted({row[0] for r in reviewers for _, row in r.rows}), metrics)
    by_run: dict[int, dict[tuple[int, str], float]] = {r.trail_id: {} for r in reviewers}
    for o in overheads:
        by_run[o.trail_id][(o.run_id, o.metric)] = overhead_value(o.abs_diff, o.rel_diff)
    for r in reviewers:
        r.overheads = by_run[r.trail_id]


class _TrailReview:
    """One trail of the run: its window (or the whole trail), every metric and kind reviewed. Its rows are read
    with every other trail's of the run (`_read_rows`)."""

    def __init__(self, run: Run, trail_id: int, unit: str | None, cfg: AnalysisSettings, bounds: alerts.Boundaries,
                 stored: dict[Any, Any], *, force: bool) -> None:
        self.run, self.trail_id, self.bounds, self.stored = run, trail_id, bounds, stored
        self.states: list[dict[str, Any]] = []
        self.settings = {(m, k): series_settings(cfg, m, k, unit) for m in cfg.metrics for k in KINDS}
        self.state_keys = {mk: history.state_key(s, min_abs, bounds.accepted.get((trail_id, *mk), ()),
                                                 bounds.annotations) for mk, (s, min_abs) in self.settings.items()}
        # From scratch when the trail has no state yet, or what its change points depend on changed.
        self.full = force or any((prev := stored.get((trail_id, *mk))) is None
                                 or prev.settings_key != self.state_keys[mk] for mk in self.settings)
        self.context, self.guard = max(window_size(s) for s, _ in self.settings.values())
        # The rows to analyse in x-axis order, the point before them (if any), and the key range re-judged (None:
        # unbounded on that side); and the overhead values of their runs.
        self.rows: list[tuple[Cell, Any]] = []
        self.before: history.Point | None = None
        self.lo_key: bytes | None = None
        self.hi_key: bytes | None = None
        self.overheads: dict[tuple[int, str], float] = {}

    def set_whole(self, keyed: list[tuple[bytes, tuple[Cell, Any]]]) -> None:
        keyed.sort(key=lambda kr: kr[0])
        self.rows = [cr for _, cr in keyed]

    def set_window(self, lower: list[tuple[Cell, Any]], upper: list[tuple[Cell, Any]]) -> None:
        context, guard = self.context, self.guard
        more_before, more_after = len(lower) > context, len(upper) > context
        self.rows = list(reversed(lower[:context])) + upper[:context]
        self.before = history.point(lower[context][1], 0.0) if more_before else None
        # From the run columns, not the cell: the analysed run's own cells were keyed by a bulk update.
        self.lo_key = history.point(self.rows[guard][1], 0.0).key if more_before else None
        self.hi_key = history.point(self.rows[-1 - guard][1], 0.0).key if more_after else None

    def review_all(self) -> list[alerts.TrailFindings]:
        lo_key, hi_key = self.lo_key, self.hi_key

        def in_region(k: bytes) -> bool:
            return (lo_key is None or k >= lo_key) and (hi_key is None or k <= hi_key)

        out = []
        for (metric, kind), (s, min_abs) in self.settings.items():
            points = []
            for cell, run_row in self.rows:
                value = value_of(cell, metric) if kind == "trail" else self.overheads.get((run_row[0], metric))
                if value is not None:
                    reps = tuple(cell.replicates or ()) if metric == "score" and kind == "trail" else ()
                    points.append(history.point(run_row, value, replicates=reps))
            if points:
                out.append(self._review(metric, kind, s, min_abs, points, self.before, in_region,
                                        self.state_keys[(metric, kind)]))
            else:  # nothing to follow (a metric the cells lack, the reference's overhead): state all the same
                self.states.append(dict(trail_id=self.trail_id, metric=metric, kind=kind,
                                        settings_key=self.state_keys[(metric, kind)], change_points=[]))
        return out

    def _review(self, metric: str, kind: str, s: Settings, min_abs: float, points: list[history.Point],
                before: history.Point | None, in_region: Any, state_key: str) -> alerts.TrailFindings:
        key3 = (self.trail_id, metric, kind)
        keys = [p.key for p in points]
        region = [i for i, k in enumerate(keys) if in_region(k)]
        known = history.known_indices(points, self.bounds.annotations, self.bounds.accepted.get(key3, ()), before)
        pos = {p.run_id: i for i, p in enumerate(points)}
        tentative = [history.Tentative(aid, pos[rid], direction) for aid, rid, direction in self.bounds.open.get(key3, [])
                     if rid in pos]
        rv = history.review(points, s, known, tentative, (region[0], region[-1]) if region else (1, 0), min_abs)

        prev = self.stored.get(key3)
        kept = [d for d in prev.change_points if not in_region(bytes.fromhex(d["key"]))] \
            if prev is not None and not self.full and prev.settings_key == state_key else []
        found = [history.cp_to_json(cp, points[cp.index]) for cp in [*rv.detected, *rv.supported.values()]]
        self.states.append(dict(trail_id=self.trail_id, metric=metric, kind=kind, settings_key=state_key,
                                change_points=sorted(kept + found, key=lambda d: d["key"])))

        return alerts.TrailFindings(
            trail_id=self.trail_id, metric=metric, kind=kind, order=[p.run_id for p in points],
            changes=[_change(cp, points) for cp in rv.detected if history.alertable(cp, min_abs)],
            supported={aid: _change(cp, points) for aid, cp in rv.supported.items()},
            withdrawn={aid: self._reason(metric, kind, points, lo, hi, next(t for t in tentative if t.alert_id == aid))
                       for aid, (lo, hi) in rv.unsupported.items()},
            current=next((p.value for p in points if p.run_id == self.run.id), None))

    def _reason(self, metric: str, kind: str, points: list[history.Point], lo: int, hi: int,
                t: history.Tentative) -> str:
        what = f"the overhead of {metric}" if kind == "overhead" else metric
        return (f"withdrawn by the analysis of run {_where(self.run)}: between {_where(points[lo])} and "
                f"{_where(points[hi])} ({hi - lo + 1} points in version order) {what} shows no {t.direction} "
                f"at or within {history.NEARBY} points of {_where(points[t.index])}")


def _where(p: Any) -> str:
    return f"{p.agent_version} (run {p.slug})" if p.agent_version else f"run {p.slug}"


def _change(cp: ChangePoint, points: list[history.Point]) -> alerts.Change:
    return alerts.Change(culprit_run_id=points[cp.index].run_id, direction=cp.direction,
                         before_mean=cp.before_mean, after_mean=cp.after_mean, magnitude_abs=cp.magnitude_abs,
                         magnitude_rel=cp.magnitude_rel, p_value=cp.p_value, effect_sigma=cp.effect_sigma)

"""Reading trails, overheads and comparisons. Reads never write: what the analysis task has not
stored (a metric outside the project's analysed set) is computed on the fly."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from benchtrail import metrics
from benchtrail.alerts import service as alerts
from benchtrail.auth.principal import Principal
from benchtrail.ingest.values import value_of
from benchtrail.errors import ErrorCode, InvalidRequest, NotFound
from benchtrail.models import Annotation, Cell, Load, Project, Scenario, Trail, Variant
from benchtrail.multiplicity import adjusted_p_values
from benchtrail.projects import service as projects
from benchtrail.revisions import HeadQuery
from benchtrail.runstate.access import get_visible_run
from benchtrail.trails import history, overhead, repository, window
from benchtrail.trails.analysis import overhead_value, series_settings
from benchtrail.trails.schemas import (AbOut, AdjustedOverCells, AlertBrief, AnnotationOut, CellKey, ChangePointOut,
                                       CompareOut, CompareRow, OverheadPoint, OverheadTrail, RunOverhead, RunOverheads,
                                       TrailDetail, TrailOut, TrailPoint)
from benchtrail.trails.settings import AB_METRICS, TRAIL_METRICS, AnalysisSettings, known_metric, load


def checked_metric(name: str, known: frozenset[str] = TRAIL_METRICS) -> str:
    """`name` when it is one of `known` (`TRAIL_METRICS`, or `AB_METRICS` for a comparison); an
    InvalidRequest naming them otherwise."""
    try:
        return known_metric(name, known)
    except ValueError as exc:
        raise InvalidRequest(str(exc), code=ErrorCode.METRIC_UNKNOWN) from None


def _trail_outs(session: Session, project: Project, trails: Sequence[Trail]) -> list[TrailOut]:
    envs = repository.environments_by_fingerprint(session, project.id)
    labels = repository.load_labels(session, project.id, [t.load_key for t in trails])
    counts = repository.point_counts(session, [t.id for t in trails])
    return [TrailOut(id=t.id, env_fingerprint=t.env_fingerprint,
                     environment=envs[t.env_fingerprint].name if t.env_fingerprint in envs else None,
                     scenario=t.scenario, load_key=t.load_key, load_label=labels.get(t.load_key),
                     variant=t.variant, mode=t.mode, process=t.process, points=counts.get(t.id, 0))
            for t in trails]


def list_trails(session: Session, principal: Principal, slug: str, *, scenario: str | None, variant: str | None,
                load: str | None, mode: str | None, environment: str | None) -> list[TrailOut]:
    project = projects.get_visible(session, principal, slug)
    rows = repository.trails(session, project.id, filters={"scenario": scenario, "variant": variant,
                                                          "load_key": load, "mode": mode,
                                                          "env_fingerprint": environment})
    return _trail_outs(session, project, rows)


def head(trail_id: int) -> HeadQuery:
    """id, is_public and revision of the trail's project (`http_cache.remembered_read`)."""
    return repository.head(trail_id)


def get_trail(session: Session, principal: Principal, trail_id: int) -> tuple[Trail, Project]:
    found = repository.trail_with_project(session, trail_id)
    trail, project = found if found is not None else (None, None)
    if trail is None or project is None or not principal.can_see(project):
        raise NotFound(f"trail {trail_id} not found")
    return trail, project


def _change_points(side: _Side, trail: Trail, metric: str, kind: str, points: list[history.Point],
                   cfg: AnalysisSettings, unit: str | None) -> list[ChangePointOut]:
    """The stored change points when they were found with the current settings and known change
    points (those the alerts come from), else a fresh analysis of the whole trail (same settings;
    open alerts as boundaries, as the analysis has them)."""
    s, min_abs = series_settings(cfg, metric, kind, unit)
    bounds = side.bounds
    key3 = (trail.id, metric, kind)
    pos = {p.run_id: i for i, p in enumerate(points)}
    if metric in cfg.metrics and side.stored is not None and side.settings_key == history.state_key(
            s, min_abs, bounds.accepted.get(key3, ()), bounds.annotations):
        cps = [history.cp_from_json(d, pos[d["run_id"]]) for d in side.stored if d["run_id"] in pos]
    else:
        known = history.known_indices(points, bounds.annotations, bounds.accepted.get(key3, ()))
        tentative = {pos[rid] for _, rid, _ in bounds.open.get(key3, []) if rid in pos}
        cps = history.detect(points, s, sorted(set(known) | tentative))
        cps = [replace(cp, known=cp.index in known, direction=cp.direction if cp.index in known or not cp.known
                       else ("regression" if (cp.magnitude_abs > 0) == (s.direction == "lower") else "improvement"))
               for cp in cps]
    out = []
    for cp in cps:
        d = history.cp_to_json(cp, points[cp.index])
        out.append(ChangePointOut(run=points[cp.index].slug, agent_version=points[cp.index].agent_version,
                                  **{k: d[k] for k in ChangePointOut.model_fields if k in d}))
    return out


@dataclass(slots=True)
class _Side:
    """What a read of a trail (or of its overhead trail) needs besides its points, read once in three
    queries: its description, its alerts (as boundaries and as briefs of the metric and kind), the
    project's annotations and the stored detection state of the metric and kind."""

    trail_out: TrailOut
    bounds: alerts.Boundaries
    briefs: list[AlertBrief]
    annotations: list[Annotation]
    settings_key: str | None
    stored: list[dict[str, Any]] | None     # the stored change points (None: no stored analysis)


def _side(session: Session, project: Project, trail: Trail, metric: str, kind: str) -> _Side:
    state = repository.trail_state(session, project.id, trail, metric, kind)
    rows = repository.trail_alerts(session, trail.id)
    notes = alerts.project_annotations(session, project.id)
    # Each row is the alert and its culprit run (slug, agent_version) at once.
    briefs = [AlertBrief(id=a.id, state=a.state, kind=a.kind, direction=a.direction, metric=a.metric, run=a.slug,
                         summary=alerts.summary(a, trail, a), permalink=alerts.permalink(project.slug, a.id))
              for a in rows if a.metric == metric and a.kind == kind]
    out = TrailOut(id=trail.id, env_fingerprint=trail.env_fingerprint, environment=state.environment,
                   scenario=trail.scenario, load_key=trail.load_key, load_label=state.load_label, variant=trail.variant,
                   mode=trail.mode, process=trail.process, points=state.points)
    return _Side(out, alerts.boundaries_of(rows, notes), briefs, notes,
                 state.settings_key, state.change_points if state.settings_key is not None else None)


@dataclass(frozen=True, slots=True)
class Page:
    """Which part of a trail to answer: see `trails.window`."""

    before: str | None = None
    limit: int = window.DEFAULT_LIMIT
    max_points: int | None = None


def _windowed(points: list[history.Point], page: Page, change_points: list[ChangePointOut],
              alerts: list[AlertBrief]) -> tuple[window.Window, list[ChangePointOut], dict[str, Any]]:
    slugs = [p.slug for p in points]
    pos = {slug: i for i, slug in enumerate(slugs)}
    keep = [pos[s] for s in [c.run for c in change_points] + [a.run for a in alerts] if s in pos]
    try:
        w = window.window(slugs, history.values_of(points), before=page.before, limit=page.limit,
                          max_points=page.max_points, keep=keep)
    except ValueError:
        raise NotFound(f"run '{page.before}' is not a point of this trail") from None
    shown = [c for c in change_points if w.start <= pos[c.run] < w.stop]
    meta = dict(total_points=w.total, window_start=w.start, downsampled=w.downsampled,
                earlier=slugs[w.start] if w.start > 0 else None)
    return w, shown, meta


@dataclass(slots=True)
class _Window:
    """One window of a trail read by its x-axis keys (`_read_window`)."""

    points: list[history.Point]   # the window's points, in x-axis order
    rows: list[Any]               # the cell (trail) or overhead (overhead trail) of each point
    kept: list[int]               # indices into `points` answered (all, or thinned)
    change_points: list[ChangePointOut]
    alerts: list[AlertBrief]
    meta: dict[str, Any]


def _read_window(session: Session, project: Project, trail: Trail, metric: str, kind: str, page: Page,
                 unit_of: Any, side: _Side) -> _Window | None:
    """The window of a trail the page asks for, read by a range scan of the x-axis keys, with the stored
    change points inside it: the cost of a read follows the window, not the trail's length. None when
    that cannot give the same answer as reading the whole trail (a metric that is not analysed, stored
    change points out of date, a point whose analysis has not run yet, or `before` not keyed)."""
    cfg = load(project.settings)
    if metric not in cfg.metrics or side.stored is None:
        return None
    found = repository.window_points(session, trail.id, metric, kind, before=page.before, limit=page.limit,
                                     columns=("score_error",) if metric == "score" and kind == "trail" else ())
    if found is None:
        return None
    rows, start = _merge_unkeyed(found, page.limit)
    if kind == "trail":
        points = [history.point(run_row, value_of(cell, metric),
                                replicates=tuple(cell.replicates or ()) if metric == "score" else ())
                  for cell, run_row in rows]
    else:
        points = [history.point(run_row, overhead_value(o.abs_diff, o.rel_diff)) for o, run_row in rows]
    unit = unit_of([r for r, _ in rows])
    s, min_abs = series_settings(cfg, metric, kind, unit)
    bounds = side.bounds
    key3 = (trail.id, metric, kind)
    if side.settings_key != history.state_key(s, min_abs, bounds.accepted.get(key3, ()), bounds.annotations):
        return None
    pos = {p.run_id: i for i, p in enumerate(points)}
    change_points = []
    for d in side.stored:
        i = pos.get(d["run_id"])
        if i is None:
            continue
        out = history.cp_to_json(history.cp_from_json(d, start + i), points[i])
        change_points.append(ChangePointOut(run=points[i].slug, agent_version=points[i].agent_version,
                                            **{k: out[k] for k in ChangePointOut.model_fields if k in out}))
    briefs = side.briefs
    local = {p.slug: i for i, p in enumerate(points)}
    keep = [local[r] for r in [c.run for c in change_points] + [a.run for a in briefs] if r in local]
    w = window.window([p.slug for p in points], history.values_of(points), before=None, limit=len(points),
                      max_points=page.max_points, keep=keep)
    meta = dict(total_points=found.total, window_start=start, downsampled=w.downsampled,
                earlier=points[0].slug if points and start > 0 else None)
    return _Window(points, [r for r, _ in rows], w.kept, change_points, briefs, meta)


def _merge_unkeyed(found: repository.WindowRows, limit: int) -> tuple[list[tuple[Any, Any]], int]:
    """The window's rows in x-axis order with the points whose analysis has not run yet merged in (keyed
    here as the analysis will key them), and the number of points before the window."""
    if not found.unkeyed:
        return [(r, run_row) for r, run_row, _ in found.keyed], found.keyed_before
    extra = [(history.point(run_row, 0.0).key, r, run_row) for r, run_row in found.unkeyed]
    merged = sorted([(k, r, run_row) for r, run_row, k in found.keyed]
                    + [e for e in extra if found.bound is None or e[0] < found.bound], key=lambda m: m[0])
    shown = merged[-limit:]
    return [(r, run_row) for _, r, run_row in shown], found.keyed_before + len(merged) - len(shown)


def trail_detail(session: Session, principal: Principal, trail_id: int, metric: str,
                 page: Page = Page()) -> TrailDetail:
    metric = checked_metric(metric)
    trail, project = get_trail(session, principal, trail_id)
    side = _side(session, project, trail, metric, "trail")
    read = _read_window(session, project, trail, metric, "trail", page,
                        lambda cells: cells[-1].score_unit if cells else None, side)
    if read is None:
        read = _whole_trail(session, project, trail, metric, page, side)
    unit = read.rows[-1].score_unit if read.rows else None
    return TrailDetail(
        trail=side.trail_out, metric=metric,
        unit=metrics.unit_of(metric, unit),
        direction=metrics.direction_of(metric, unit),
        # A JMH score's ± error (99.9%, as JMH prints it), for the chart's error bars.
        points=[TrailPoint(run=p.slug, agent_version=p.agent_version, commit=p.commit, created_at=p.created_at,
                           value=p.value, error=cell.score_error if metric == "score" else None, is_valid=p.is_valid)
                for p, cell in ((read.points[i], read.rows[i]) for i in read.kept)],
        change_points=read.change_points, alerts=read.alerts,
        annotations=[AnnotationOut.model_validate(a, from_attributes=True) for a in side.annotations], **read.meta)


def _whole_trail(session: Session, project: Project, trail: Trail, metric: str, page: Page, side: _Side) -> _Window:
    """The trail read whole, in Python order (what `_read_window` cannot answer)."""
    rows = repository.trail_cells(session, [trail.id], [metric, *(("score_error",) if metric == "score" else ())])
    built = sorted(((history.point(run_row, value_of(cell, metric),
                                   replicates=tuple(cell.replicates or ()) if metric == "score" else ()), cell)
                    for cell, run_row in rows if value_of(cell, metric) is not None), key=lambda pc: pc[0].order_key)
    points = [p for p, _ in built]
    unit = built[-1][1].score_unit if built else None
    cfg = load(project.settings)
    alert_briefs = side.briefs
    w, change_points, meta = _windowed(
        points, page, _change_points(side, trail, metric, "trail", points, cfg, unit), alert_briefs)
    return _Window(points, [c for _, c in built], w.kept, change_points, alert_briefs, meta)


def overhead_trail(session: Session, principal: Principal, trail_id: int, metric: str,
                   page: Page = Page()) -> OverheadTrail:
    metric = checked_metric(metric)
    trail, project = get_trail(session, principal, trail_id)
    unit, reference = repository.latest_unit_and_reference(session, trail.id)
    side = _side(session, project, trail, metric, "overhead")
    read = _read_window(session, project, trail, metric, "overhead", page, lambda _: unit, side)
    if read is not None:
        rows = [(p, o.abs_diff, o.rel_diff, o.ci_low, o.ci_high, o.verdict) for p, o in zip(read.points, read.rows)]
    else:
        rows, read = _whole_overhead_trail(session, project, trail, metric, page, unit, side)
    return OverheadTrail(
        trail=side.trail_out, reference_variant=reference, metric=metric,
        unit=metrics.unit_of(metric, unit),
        direction=metrics.direction_of(metric, unit),
        points=[OverheadPoint(run=p.slug, agent_version=p.agent_version, commit=p.commit, created_at=p.created_at,
                              is_valid=p.is_valid, value_pct=p.value, abs_diff=a, rel_diff=r, ci_low=lo, ci_high=hi,
                              verdict=v) for p, a, r, lo, hi, v in (rows[i] for i in read.kept)],
        change_points=read.change_points, alerts=read.alerts, **read.meta)


def _whole_overhead_trail(session: Session, project: Project, trail: Trail, metric: str, page: Page,
                          unit: str | None, side: _Side) -> tuple[list[tuple[Any, ...]], _Window]:
    """The overhead trail read whole, in Python order (what `_read_window` cannot answer)."""
    cfg = load(project.settings)
    if metric in cfg.metrics:
        stored = repository.overhead_points(session, [trail.id], metric)
        rows = [(history.point(run_row, overhead_value(o.abs_diff, o.rel_diff)), o.abs_diff, o.rel_diff, o.ci_low,
                 o.ci_high, o.verdict) for o, run_row in stored]
    else:
        rows = _overheads_on_the_fly(session, trail, metric)
    rows.sort(key=lambda r: r[0].order_key)
    points = [r[0] for r in rows]
    alert_briefs = side.briefs
    w, change_points, meta = _windowed(
        points, page, _change_points(side, trail, metric, "overhead", points, cfg, unit), alert_briefs)
    return rows, _Window(points, rows, w.kept, change_points, alert_briefs, meta)


def _overheads_on_the_fly(session: Session, trail: Trail, metric: str) -> list[tuple[Any, ...]]:
    rows = repository.trail_cells(session, [trail.id], [metric], with_histogram=True)
    refs = repository.reference_cells(session, [c for c, _ in rows])
    out = []
    for cell, run_row in rows:
        ref = refs.get(cell.id)
        a = overhead.evidence(ref, metric) if ref is not None else None
        b = overhead.evidence(cell, metric)
        if a is None or b is None:
            continue
        d = overhead.to_dict(overhead.ab(a, b, metric))
        out.append((history.point(run_row, overhead_value(d["abs_diff"], d["rel_diff"])), d["abs_diff"],
                    d["rel_diff"], d["ci_low"], d["ci_high"], d["verdict"]))
    return out


def _cell_keys(session: Session, run_id: int) -> tuple[dict[int, Variant], dict[int, Scenario], dict[int, Load]]:
    return repository.run_parts(session, run_id)


def run_overheads(session: Session, principal: Principal, slug: str, metric: str) -> RunOverheads:
    metric = checked_metric(metric, AB_METRICS)
    run, project = get_visible_run(session, principal, slug)
    if metric in load(project.settings).metrics and run.analysis_status == "done":
        # Stored by the analysis: the overheads and the names keying their cells, two queries.
        results = [(o.cell_id, o.ref_cell_id, o.detail) for o in repository.overheads_of_run(session, run.id, metric)]
        keys = {k.id: k for k in repository.run_cell_keys(session, run.id)}
        items = [RunOverhead(cell=CellKey(scenario=keys[cid].scenario, load_key=keys[cid].key,
                                          load_label=keys[cid].label, mode=keys[cid].mode, process=keys[cid].process),
                             variant=keys[cid].variant, reference_variant=keys[ref].variant, cell_id=cid, ref_cell_id=ref,
                             trail_id=keys[cid].trail_id, result=AbOut(**detail))
                 for cid, ref, detail in results]
        return RunOverheads(run=run.slug, metric=metric, items=_adjusted(items))
    from benchtrail.trails.analysis import overhead_rows

    variants, scenarios, loads = _cell_keys(session, run.id)
    cells = {c.id: c for c in repository.run_cells(session, run.id)}
    items = []
    for r in overhead_rows(run, list(cells.values()), variants, [metric]):
        c, ref = cells[r["cell_id"]], cells[r["ref_cell_id"]]
        items.append(RunOverhead(cell=_key(c, scenarios, loads), variant=variants[c.variant_id].name,
                                 reference_variant=variants[ref.variant_id].name, cell_id=c.id, ref_cell_id=ref.id,
                                 trail_id=c.trail_id, result=AbOut(**r["detail"])))
    return RunOverheads(run=run.slug, metric=metric, items=_adjusted(items))


Adjusted = TypeVar("Adjusted", bound=AdjustedOverCells)


def _adjusted(items: list[Adjusted]) -> list[Adjusted]:
    """`items` with each p-value adjusted over all of them: the verdicts of one answer are read together."""
    for item, p in zip(items, adjusted_p_values([item.result.p_value for item in items])):
        item.p_adjusted = p
    return items


def _key(c: Cell, scenarios: dict[int, Scenario], loads: dict[int, Load]) -> CellKey:
    load_row = loads[c.load_id]
    return CellKey(scenario=scenarios[c.scenario_id].name, load_key=load_row.key, load_label=load_row.label,
                   mode=c.mode, process=c.process)


def compare_runs(session: Session, principal: Principal, a_slug: str, b_slug: str, *, a_variant: str | None,
                 b_variant: str | None, metric: str | None) -> CompareOut:
    """Run b minus run a, cell by cell: same scenario, load and mode; the same variant name unless
    a_variant/b_variant pick one variant on each side."""
    if metric is not None:
        checked_metric(metric, AB_METRICS)
    run_a, _ = get_visible_run(session, principal, a_slug)
    run_b, _ = get_visible_run(session, principal, b_slug)
    parts_a, parts_b = _cell_keys(session, run_a.id), _cell_keys(session, run_b.id)
    for name, parts, slug in ((a_variant, parts_a, a_slug), (b_variant, parts_b, b_slug)):
        if name is not None and name not in {v.name for v in parts[0].values()}:
            raise NotFound(f"run '{slug}' has no variant '{name}'")

    def index(run_id: int, parts: Any, only: str | None) -> dict[tuple[str, str, str, str, str], Cell]:
        variants, scenarios, loads = parts
        out = {}
        for c in repository.run_cells(session, run_id):
            v = variants[c.variant_id].name
            if only is not None and v != only:
                continue
            out[("" if only else v, scenarios[c.scenario_id].name, loads[c.load_id].key, c.mode, c.process)] = c
        return out

    cells_a, cells_b = index(run_a.id, parts_a, a_variant), index(run_b.id, parts_b, b_variant)
    items = []
    for key, ca in cells_a.items():
        cb = cells_b.get(key)
        if cb is None:
            continue
        for m in ((metric,) if metric else metrics.COMPARE_PREFERENCE):
            ea, eb = overhead.evidence(ca, m), overhead.evidence(cb, m)
            if ea is None or eb is None:
                continue
            result = overhead.to_dict(overhead.ab(ea, eb, m))
            items.append(CompareRow(cell=_key(ca, parts_a[1], parts_a[2]), metric=m,
                                    a_variant=parts_a[0][ca.variant_id].name, b_variant=parts_b[0][cb.variant_id].name,
                                    a_cell_id=ca.id, b_cell_id=cb.id, result=AbOut(**result)))
            break
    return CompareOut(a=run_a.slug, b=run_b.slug, metric=metric, items=_adjusted(items))

"""Every query of trails, overheads and their analysis state."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, bindparam, delete, func, literal, select, text, true, union_all, update
from sqlalchemy.dialects.postgresql import ARRAY, distinct_on, insert
from sqlalchemy.orm import Session, aliased, load_only

from benchtrail import revisions
from benchtrail.ingest.values import derived
from benchtrail.models import Cell, Environment, Load, Project, Run, Scenario, Trail, Variant
from benchtrail.models.alert import Alert, Overhead, TrailAnalysis

# Cell columns a trail reads; never the histogram, which can be large, unless asked.
_POINT_COLUMNS = ("id", "run_id", "trail_id", "variant_id", "scenario_id", "load_id", "mode", "params",
                  "replicates", "score_unit", "order_key")
_RUN_COLUMNS = (Run.id, Run.slug, Run.agent_version, Run.commit, Run.created_at, Run.started_at, Run.is_valid)


def trails(session: Session, project_id: int, *, filters: dict[str, str | None]) -> Sequence[Trail]:
    stmt = select(Trail).where(Trail.project_id == project_id)
    for column, value in filters.items():
        if value is not None:
            stmt = stmt.where(getattr(Trail, column) == value)
    return session.scalars(stmt.order_by(Trail.scenario, Trail.load_key, Trail.variant, Trail.mode)).all()


def environments_by_fingerprint(session: Session, project_id: int) -> dict[str, Environment]:
    return {e.fingerprint: e for e in session.scalars(select(Environment).where(Environment.project_id == project_id))}


def load_labels(session: Session, project_id: int, keys: Iterable[str]) -> dict[str, str]:
    """The label of each load key, from the most recent run that has it."""
    rows = session.execute(select(Load.key, Load.label).ext(distinct_on(Load.key)).join(Run, Run.id == Load.run_id)
                           .where(Run.project_id == project_id, Load.key.in_(list(set(keys))))
                           .order_by(Load.key, Load.id.desc()))
    return {key: label for key, label in rows}


_HEAD = revisions.head().join(Trail, Trail.project_id == Project.id).where(Trail.id == bindparam("trail_id"))


def head(trail_id: int) -> revisions.HeadQuery:
    """The trail's project (id, is_public) and its revision, for a remembered read (http_cache)."""
    return revisions.HeadQuery(_HEAD, {"trail_id": trail_id})


def trail_with_project(session: Session, trail_id: int) -> tuple[Trail, Project] | None:
    row = session.execute(select(Trail, Project).join(Project, Project.id == Trail.project_id)
                          .where(Trail.id == trail_id)).first()
    return (row[0], row[1]) if row is not None else None


# What a trail read needs besides its points, in one statement built once: the trail's environment name,
# its load's label in the newest run that has it, its points (cells of completed runs), and the stored
# detection state of one metric and kind.
_P, _T = bindparam("project_id"), bindparam("trail_id")
_STATE = select(
    select(Environment.name).where(Environment.project_id == _P, Environment.fingerprint == bindparam("fingerprint"))
    .limit(1).scalar_subquery().label("environment"),
    select(Load.label).join(Run, Run.id == Load.run_id).where(Run.project_id == _P, Load.key == bindparam("load_key"))
    .order_by(Load.id.desc()).limit(1).scalar_subquery().label("load_label"),
    select(func.count(Cell.id)).join(Run, Run.id == Cell.run_id).where(Cell.trail_id == _T, Run.status == "completed")
    .scalar_subquery().label("points"),
    *(select(getattr(TrailAnalysis, column)).where(TrailAnalysis.trail_id == _T,
                                                   TrailAnalysis.metric == bindparam("metric"),
                                                   TrailAnalysis.kind == bindparam("kind"))
      .scalar_subquery().label(column) for column in ("settings_key", "change_points")))


@dataclass(frozen=True, slots=True)
class TrailState:
    environment: str | None
    load_label: str | None
    points: int
    settings_key: str | None          # of the stored analysis of (metric, kind); None when there is none
    change_points: list[dict[str, Any]] | None


def trail_state(session: Session, project_id: int, trail: Trail, metric: str, kind: str) -> TrailState:
    """A trail's environment name, its load's label in the newest run that has it, its points (cells of
    completed runs) and the stored analysis of one metric and kind, in one query."""
    row = session.execute(_STATE, {"project_id": project_id, "trail_id": trail.id, "fingerprint": trail.env_fingerprint,
                                   "load_key": trail.load_key, "metric": metric, "kind": kind}).one()
    return TrailState(row.environment, row.load_label, int(row.points or 0), row.settings_key, row.change_points)


# The alerts of one trail (every metric and kind), newest first, with their culprit run's slug and version:
# plain rows, what a trail read needs for its boundaries and its alert briefs.
_TRAIL_ALERTS = (select(Alert.id, Alert.trail_id, Alert.metric, Alert.kind, Alert.state, Alert.direction, Alert.run_id,
                        Alert.before_value, Alert.after_value, Alert.magnitude_abs, Alert.magnitude_rel, Run.slug,
                        Run.agent_version)
                 .join(Run, Run.id == Alert.run_id).where(Alert.trail_id == _T)
                 .order_by(Alert.created_at.desc(), Alert.id.desc()))


def trail_alerts(session: Session, trail_id: int) -> Sequence[Any]:
    return session.execute(_TRAIL_ALERTS, {"trail_id": trail_id}).all()


def _columns_of(metrics: Sequence[str]) -> list[str]:
    """The cell columns the values of `metrics` are read from (`ingest.values.value_of`): a metric's own, or the
    histogram a derived one is computed from, or the counts of the error rate."""
    out: list[str] = []
    for name in metrics:
        out += ["histogram"] if derived(name) else ["errors", "count"] if name == "error_rate" else [name]
    return out


def _has_value(metric: str) -> Any:
    return Cell.histogram.is_not(None) if derived(metric) else getattr(Cell, metric).is_not(None)


def trail_cells(session: Session, trail_ids: Sequence[int], metrics: Sequence[str], *,
                with_histogram: bool = False) -> Sequence[tuple[Cell, Any]]:
    """(cell, run row) of every completed run on these trails; only the named metrics' columns."""
    columns = [*_POINT_COLUMNS, *_columns_of(metrics),
               *(("histogram", "repetitions", "extra") if with_histogram else ())]
    stmt = (select(Cell, *_RUN_COLUMNS).join(Run, Run.id == Cell.run_id)
            .options(load_only(*(getattr(Cell, c) for c in dict.fromkeys(columns))))
            .where(Cell.trail_id.in_(list(trail_ids)), Run.status == "completed"))
    return [(row[0], row[1:]) for row in session.execute(stmt)]


def run_cells(session: Session, run_id: int) -> Sequence[Cell]:
    return session.scalars(select(Cell).where(Cell.run_id == run_id).order_by(Cell.id)).all()


def run_cell_keys(session: Session, run_id: int) -> Sequence[Any]:
    """Each whole-variant and process cell of a run with the names that key it, in one query and without
    the measurements: (id, trail_id, mode, process, variant, scenario, key, label)."""
    return session.execute(
        select(Cell.id, Cell.trail_id, Cell.mode, Cell.process, Variant.name.label("variant"),
               Scenario.name.label("scenario"), Load.key, Load.label)
        .join(Variant, Variant.id == Cell.variant_id).join(Scenario, Scenario.id == Cell.scenario_id)
        .join(Load, Load.id == Cell.load_id).where(Cell.run_id == run_id).order_by(Cell.id)).all()


def run_parts(session: Session, run_id: int) -> tuple[dict[int, Variant], dict[int, Scenario], dict[int, Load]]:
    variants = {v.id: v for v in session.scalars(select(Variant).where(Variant.run_id == run_id))}
    scenarios = {s.id: s for s in session.scalars(select(Scenario).where(Scenario.run_id == run_id))}
    loads = {l.id: l for l in session.scalars(select(Load).where(Load.run_id == run_id))}
    return variants, scenarios, loads


def replace_overheads(session: Session, run_id: int, rows: list[dict[str, Any]]) -> None:
    session.execute(delete(Overhead).where(Overhead.run_id == run_id))
    if rows:
        session.execute(insert(Overhead).values(rows))


def overheads_of_run(session: Session, run_id: int, metric: str) -> Sequence[Overhead]:
    return session.scalars(select(Overhead).where(Overhead.run_id == run_id, Overhead.metric == metric)
                           .order_by(Overhead.cell_id)).all()


def overhead_points(session: Session, trail_ids: Sequence[int], metric: str) -> Sequence[tuple[Overhead, Any]]:
    stmt = (select(Overhead, *_RUN_COLUMNS).join(Run, Run.id == Overhead.run_id)
            .where(Overhead.trail_id.in_(list(trail_ids)), Overhead.metric == metric, Run.status == "completed"))
    return [(row[0], row[1:]) for row in session.execute(stmt)]


def analyses(session: Session, trail_ids: Sequence[int]) -> dict[tuple[int, str, str], TrailAnalysis]:
    rows = session.scalars(select(TrailAnalysis).where(TrailAnalysis.trail_id.in_(list(trail_ids))))
    return {(a.trail_id, a.metric, a.kind): a for a in rows}


def save_analyses(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Upsert detection states: dicts of trail_id, metric, kind, settings_key, change_points."""
    if not rows:
        return
    stmt = insert(TrailAnalysis)
    # executemany form (parameters apart from the statement): compiled once and cached, sent in batches
    session.execute(stmt.on_conflict_do_update(
        index_elements=["trail_id", "metric", "kind"],
        set_={"settings_key": stmt.excluded.settings_key, "change_points": stmt.excluded.change_points,
              "updated_at": func.now()}), list(rows))


# Advisory lock class of "a trail's detection state" (the second key is the trail id).
_TRAIL_LOCK = 7401


def lock_trails(session: Session, trail_ids: Sequence[int]) -> None:
    """Serialise analyses per trail until the transaction ends. Taken in id order (one statement over the sorted
    ids, which unnest returns in their order), so two analyses that share trails cannot deadlock; ingest and reads
    are never blocked."""
    ids = sorted(set(trail_ids))
    if ids:
        session.execute(text("SELECT pg_advisory_xact_lock(:cls, t) FROM unnest(CAST(:ids AS integer[])) AS t"),
                        {"cls": _TRAIL_LOCK, "ids": ids})


def set_order_keys(session: Session, keys: Sequence[tuple[int, bytes]]) -> None:
    """(cell id, x-axis key) pairs."""
    if keys:
        session.execute(update(Cell), [{"id": cid, "order_key": key} for cid, key in keys],
                        execution_options={"synchronize_session": False})


def window_cells(session: Session, trails: Mapping[int, int], key: bytes,
                 metrics: Sequence[str]) -> dict[int, tuple[list[tuple[Cell, Any]], list[tuple[Cell, Any]]]]:
    """For each trail id -> n: up to n points of the trail before `key` (nearest first) and up to n at or after it
    (nearest first), of completed runs. Two range scans of ix_cells_trail_id_order_key per trail, all in one
    statement, then one read of those cells: two round trips whatever the number of trails."""
    if not trails:
        return {}
    w = select(func.unnest(bindparam("trail_ids", list(trails), type_=ARRAY(Integer))).label("trail_id"),
               func.unnest(bindparam("limits", list(trails.values()), type_=ARRAY(Integer))).label("n")).cte("w")

    def side(number: int, where: Any, order: Any) -> Any:
        scan = (select(Cell.id, Cell.order_key).join(Run, Run.id == Cell.run_id)
                .where(Cell.trail_id == w.c.trail_id, Run.status == "completed", where)
                .order_by(order).limit(w.c.n).lateral())
        return (select(w.c.trail_id, literal(number).label("side"), scan.c.id, scan.c.order_key)
                .select_from(w).join(scan, true()))

    found = session.execute(union_all(side(0, Cell.order_key < key, Cell.order_key.desc()),
                                      side(1, Cell.order_key >= key, Cell.order_key))).all()
    columns = [getattr(Cell, c) for c in dict.fromkeys([*_POINT_COLUMNS, "order_key", *_columns_of(metrics)])]
    loaded = {row[0].id: (row[0], row[1:]) for row in session.execute(
        select(Cell, *_RUN_COLUMNS).join(Run, Run.id == Cell.run_id).options(load_only(*columns))
        .where(Cell.id.in_([r.id for r in found])))} if found else {}
    out: dict[int, tuple[list[tuple[Cell, Any]], list[tuple[Cell, Any]]]] = {t: ([], []) for t in trails}
    # Nearest first on each side, by the keys the database holds (the analysed run's own cells were keyed by a
    # bulk update, which the cells already in this session do not show).
    for r in sorted(found, key=lambda r: r.order_key):
        out[r.trail_id][r.side].append(loaded[r.id])
    for lower, _ in out.values():
        lower.reverse()
    return out


def overheads_of_runs(session: Session, trail_ids: Sequence[int], run_ids: Sequence[int],
                      metrics: Sequence[str]) -> Sequence[Any]:
    """(trail_id, run_id, metric, abs_diff, rel_diff) rows of these trails and runs, as plain rows: the analysis
    only reads them."""
    if not trail_ids or not run_ids:
        return []
    return session.execute(select(Overhead.trail_id, Overhead.run_id, Overhead.metric, Overhead.abs_diff,
                                  Overhead.rel_diff)
                           .where(Overhead.trail_id.in_(list(trail_ids)), Overhead.run_id.in_(list(run_ids)),
                                  Overhead.metric.in_(list(metrics)))).all()


def runs_by_id(session: Session, run_ids: Iterable[int]) -> dict[int, Run]:
    ids = list(set(run_ids))
    return {r.id: r for r in session.scalars(select(Run).where(Run.id.in_(ids)))} if ids else {}


def point_counts(session: Session, trail_ids: Sequence[int]) -> dict[int, int]:
    rows = session.execute(select(Cell.trail_id, func.count(Cell.id)).join(Run, Run.id == Cell.run_id)
                           .where(Cell.trail_id.in_(list(trail_ids)), Run.status == "completed")
                           .group_by(Cell.trail_id))
    return {tid: n for tid, n in rows}


def reference_cells(session: Session, cells: Sequence[Cell]) -> dict[int, Cell]:
    """For each cell, the reference variant's cell of the same run, scenario, load and mode."""
    run_ids = list({c.run_id for c in cells})
    if not run_ids:
        return {}
    refs = session.scalars(select(Cell).join(Variant, Variant.id == Cell.variant_id)
                           .where(Cell.run_id.in_(run_ids), Variant.is_reference.is_(True)))
    by_key = {(r.run_id, r.scenario_id, r.load_id, r.mode, r.process): r for r in refs}
    out = {}
    for c in cells:
        ref = by_key.get((c.run_id, c.scenario_id, c.load_id, c.mode, c.process))
        if ref is not None and ref.id != c.id:
            out[c.id] = ref
    return out


def _unit_and_reference() -> Any:
    """The score unit of a trail's newest cell and the name of the reference variant of its run: the newest
    cell first, then its reference (joining every cell of the trail to its reference grew with the trail)."""
    newest = (select(Cell.id, Cell.run_id, Cell.scenario_id, Cell.load_id, Cell.mode, Cell.process, Cell.score_unit)
              .join(Run, Run.id == Cell.run_id).where(Cell.trail_id == _T, Run.status == "completed")
              .order_by(Cell.run_id.desc()).limit(1).subquery())
    ref_cell = aliased(Cell)
    ref_variant = aliased(Variant)
    return (select(newest.c.score_unit, ref_variant.name).select_from(newest)
            .outerjoin(ref_cell, (ref_cell.run_id == newest.c.run_id) & (ref_cell.scenario_id == newest.c.scenario_id)
                       & (ref_cell.load_id == newest.c.load_id) & (ref_cell.mode == newest.c.mode)
                       & (ref_cell.process == newest.c.process) & (ref_cell.id != newest.c.id))
            .outerjoin(ref_variant, (ref_variant.id == ref_cell.variant_id) & ref_variant.is_reference.is_(True))
            .order_by(ref_variant.name.nulls_last()).limit(1))


# Built once: building it (two aliased entities and a subquery) cost more than running it.
_UNIT_AND_REFERENCE = _unit_and_reference()


def latest_unit_and_reference(session: Session, trail_id: int) -> tuple[str | None, str | None]:
    """The score unit of the trail's newest cell and the name of the reference variant of its run."""
    row = session.execute(_UNIT_AND_REFERENCE, {"trail_id": trail_id}).first()
    return (row[0], row[1]) if row else (None, None)


def _window_base(metric: str, kind: str, columns: Sequence[str]) -> Any:
    """The points of trail `trail_id` (a bind parameter; kind "trail": its cells with a value of `metric`) or of
    its overhead trail (kind "overhead": the stored overheads of `metric`), of completed runs, with their x-axis
    key. Plain column rows (no ORM objects), named as the cell's or the overhead's attributes."""
    if kind == "trail":
        # A score's replicates feed its detection; other metrics have none to decode.
        point = [getattr(Cell, c).label(c) for c in dict.fromkeys(
            ["score_unit", *(("replicates",) if metric == "score" else ()), *_columns_of([metric, *columns])])]
        return (select(Cell.id.label("cell_id"), *point, *_RUN_COLUMNS, Cell.order_key).join(Run, Run.id == Cell.run_id)
                .where(Cell.trail_id == _T, Run.status == "completed", _has_value(metric)))
    return (select(Overhead.cell_id, Overhead.abs_diff, Overhead.rel_diff, Overhead.ci_low, Overhead.ci_high,
                   Overhead.verdict, *_RUN_COLUMNS, Cell.order_key)
            .join(Run, Run.id == Overhead.run_id).join(Cell, Cell.id == Overhead.cell_id)
            .where(Overhead.trail_id == _T, Overhead.metric == metric, Run.status == "completed"))


# Points of a trail whose run's analysis has not run yet (no x-axis key): a window read merges them in
# Python; past this many, it reads the whole trail instead.
MAX_UNKEYED = 200


@dataclass(frozen=True, slots=True)
class WindowRows:
    keyed: list[tuple[Any, Any, bytes]]   # (point row, run row, key), ascending, the newest `limit`
    unkeyed: list[tuple[Any, Any]]        # points with no key yet (every one of them)
    total: int                            # points in the whole trail
    keyed_before: int                     # keyed points before keyed[0]
    bound: bytes | None                   # the key of `before`: the window is the points before it


@dataclass(frozen=True, slots=True)
class _WindowStatements:
    """The statements of a window read, built once per (metric, kind, columns, bounded); bind parameters
    trail_id, before, bound and limit."""
    width: int     # point columns of a row (then the run columns, then the key)
    bound: Any     # the key of run `before`
    counts: Any    # points, keyed points, keyed points before `bound` (or all keyed points)
    unkeyed: Any   # the points not keyed yet
    keyed: Any     # the newest `limit` keyed points (before `bound` when bounded)


@functools.lru_cache(maxsize=256)
def _window_statements(metric: str, kind: str, columns: tuple[str, ...], bounded: bool) -> _WindowStatements:
    base = _window_base(metric, kind, columns)
    bound = bindparam("bound", type_=Cell.order_key.type)
    keyed = base.where(Cell.order_key.is_not(None))
    if bounded:
        keyed = keyed.where(Cell.order_key < bound)
    return _WindowStatements(
        width=len(base.selected_columns) - len(_RUN_COLUMNS) - 1,
        bound=base.with_only_columns(Cell.order_key).where(Run.slug == bindparam("before")).limit(1),
        counts=base.with_only_columns(func.count(), func.count(Cell.order_key),
                                      func.count(Cell.order_key).filter(Cell.order_key < bound) if bounded
                                      else func.count(Cell.order_key)),
        unkeyed=base.where(Cell.order_key.is_(None)),
        keyed=keyed.order_by(Cell.order_key.desc()).limit(bindparam("limit", type_=Integer)))


def window_points(session: Session, trail_id: int, metric: str, kind: str, *, columns: Sequence[str] = (),
                  before: str | None, limit: int) -> WindowRows | None:
    """The newest `limit` keyed points of a trail in x-axis order (or those just before run `before`), by a
    range scan of ix_cells_trail_id_order_key, and the points not keyed yet. None when `before` is not a
    keyed point of the trail or too many points lack a key (the caller reads the whole trail)."""
    stmts = _window_statements(metric, kind, tuple(columns), before is not None)
    params: dict[str, Any] = {"trail_id": trail_id, "limit": limit}
    bound = None
    if before is not None:
        bound = session.scalar(stmts.bound, {**params, "before": before})
        if bound is None:
            return None
        params["bound"] = bound
    # The counts first: the points not keyed yet are read only when there are some (usually none).
    total, keyed_all, keyed_upto = session.execute(stmts.counts, params).one()
    if total - keyed_all > MAX_UNKEYED:
        return None
    unkeyed = session.execute(stmts.unkeyed, params).all() if total > keyed_all else []
    keyed = session.execute(stmts.keyed, params).all()
    keyed.reverse()
    # The window holds the newest `limit` keyed points before `bound` (or of all): the keyed points before
    # its first one are those before `bound` (or all keyed points) but the window's.
    width = stmts.width
    return WindowRows([(row, tuple(row[width:-1]), row[-1]) for row in keyed],
                      [(row, tuple(row[width:-1])) for row in unkeyed], total, keyed_upto - len(keyed), bound)

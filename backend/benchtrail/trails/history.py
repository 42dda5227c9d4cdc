"""A trail's points in x-axis order, and change points stored with the run they start at.

Pure functions over rows already loaded: no queries here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from benchtrail.analysis import ChangePoint, DetectionResult, Settings, analyse, detect_incremental, trail_order_key


@dataclass(slots=True)
class Point:
    run_id: int
    slug: str
    agent_version: str | None
    commit: str | None
    created_at: datetime
    started_at: datetime | None
    is_valid: bool
    value: float
    replicates: Sequence[float] = field(default_factory=tuple)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def order_key(self) -> tuple[Any, ...]:
        return (trail_order_key(self.agent_version, None, self.started_at or self.created_at), self.run_id)


def point(run_row: Any, value: float, **kw: Any) -> Point:
    """From the run columns of `repository.trail_cells` / `overhead_points`."""
    run_id, slug, agent_version, commit, created_at, started_at, is_valid = run_row
    return Point(run_id, slug, agent_version, commit, created_at, started_at, bool(is_valid), float(value), **kw)


def ordered(points: list[Point]) -> list[Point]:
    return sorted(points, key=lambda p: p.order_key)


def values_of(points: Sequence[Point]) -> list[float]:
    """Invalid runs stay in the trail as NaN: the detector skips them and indices stay aligned."""
    return [p.value if p.is_valid and math.isfinite(p.value) else math.nan for p in points]


def replicates_of(points: Sequence[Point]) -> list[Sequence[float]] | None:
    if points and all(len(p.replicates) >= 2 for p in points):
        return [p.replicates for p in points]
    return None


def known_indices(points: Sequence[Point], annotations: Sequence[Any], alerted_run_ids: set[int]) -> list[int]:
    """Indices that are known change points: the first point of an annotated version (or the first at
    or after an annotated time), and the culprits of alerts (except invalid ones)."""
    out: set[int] = set()
    for a in annotations:
        for i, p in enumerate(points):
            if a.agent_version is not None and p.agent_version == a.agent_version:
                out.add(i)
                break
            if a.agent_version is None and a.at is not None and (p.started_at or p.created_at) >= a.at:
                out.add(i)
                break
    out.update(i for i, p in enumerate(points) if p.run_id in alerted_run_ids)
    return sorted(i for i in out if i > 0)


def cp_to_json(cp: ChangePoint, run_id: int) -> dict[str, Any]:
    out: dict[str, Any] = {"run_id": run_id}
    for name in ChangePoint.__dataclass_fields__:
        v = getattr(cp, name)
        out[name] = None if isinstance(v, float) and not math.isfinite(v) else v
    return out


def cp_from_json(d: dict[str, Any], index: int) -> ChangePoint:
    nan = lambda v: math.nan if v is None else v  # noqa: E731
    return ChangePoint(index=index, p_value=nan(d["p_value"]), magnitude_abs=nan(d["magnitude_abs"]),
                       magnitude_rel=nan(d["magnitude_rel"]), direction=d["direction"],
                       before_mean=nan(d["before_mean"]), after_mean=nan(d["after_mean"]),
                       effect_sigma=math.inf if d.get("effect_sigma") is None else d["effect_sigma"],
                       known=bool(d.get("known")))


def detect(points: Sequence[Point], settings: Settings, known: Sequence[int], previous_run_ids: Sequence[int] | None,
           previous_cps: Sequence[dict[str, Any]] | None) -> list[ChangePoint]:
    """Change points of the trail; when the trail only grew at its end since the stored analysis
    (same settings), only the tail is rescanned."""
    run_ids = [p.run_id for p in points]
    values = values_of(points)
    reps = replicates_of(points)
    if previous_run_ids is not None and previous_cps is not None:
        n_prev = len(previous_run_ids)
        if list(previous_run_ids) == run_ids:
            pos = {rid: i for i, rid in enumerate(run_ids)}
            return [cp_from_json(d, pos[d["run_id"]]) for d in previous_cps if d["run_id"] in pos]
        if 0 < n_prev < len(run_ids) and run_ids[:n_prev] == list(previous_run_ids):
            pos = {rid: i for i, rid in enumerate(run_ids)}
            prev = DetectionResult([cp_from_json(d, pos[d["run_id"]]) for d in previous_cps], n_prev)
            return detect_incremental(values, prev, len(run_ids) - n_prev, settings, replicates=reps,
                                      known=known).change_points
    return analyse(values, replicates=reps, settings=settings, known=known).change_points

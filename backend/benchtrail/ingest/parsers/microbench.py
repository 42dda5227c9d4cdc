"""What the micro-benchmark formats share (Go, pytest-benchmark, Google Benchmark, Criterion, hyperfine,
BMF, github-action-benchmark): each result is a score cell, as a JMH result is.

- scenario: the benchmark's name; its parameters (`/size=10`, pytest's `params`, Google Benchmark's
  `size:10`) are written after it as JMH @Params are (`jmh_common.scenario_of`), so that each combination
  is a benchmark of its own;
- mode: the measure (`ns/op`, `B/op`, `real_time`, `mean`, a BMF measure slug): one trail per measure;
- score and unit: the measure's value and unit; a unit whose direction the unit alone does not tell is
  marked (`benchtrail.metrics.marked_unit`);
- replicates: the values of the repetitions, when the tool kept them (`go test -count`, Google
  Benchmark `--benchmark_repetitions`, hyperfine's runs); the score is then their mean.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from ...metrics import Direction, marked_unit
from ..model import NONE_LOAD, LoadSpec, ParseError, ReportedCell
from .jmh_common import scenario_of

MODE_LIMIT = 64     # cells.mode
UNIT_LIMIT = 64     # cells.score_unit


def score_cell(name: str, params: dict[str, str], mode: str, unit: str, *, score: float | None = None,
               replicates: Sequence[float] = (), error: float | None = None, direction: Direction | None = None,
               load: LoadSpec = NONE_LOAD, extra: dict[str, str] | None = None, where: str = "") -> ReportedCell:
    values = [float(v) for v in replicates]
    for v in values:
        if not math.isfinite(v):
            raise ParseError(f"{where or name}: {v!r} is not a finite number", field=where or None)
    if score is None:
        if not values:
            raise ParseError(f"{where or name}: no value", field=where or None)
        score = statistics.fmean(values)
    if not math.isfinite(score):
        raise ParseError(f"{where or name}: {score!r} is not a finite number", field=where or None)
    mode = mode[:MODE_LIMIT]
    unit = marked_unit(unit, direction)
    if len(unit) > UNIT_LIMIT:
        raise ParseError(f"{where or name}: unit {unit!r} is longer than {UNIT_LIMIT} characters",
                         field=where or None)
    stats = {"score": float(score)}
    if error is not None and math.isfinite(error):
        stats["score_error"] = float(error)
    cell_params = dict(params)
    if len(values) > 1:
        cell_params["repetitions"] = str(len(values))
        cell_params["median"] = repr(statistics.median(values))
        cell_params["stddev"] = repr(statistics.stdev(values))
    cell_params.update(extra or {})
    return ReportedCell(scenario=scenario_of(name, params), load=load, stats=stats, unit=unit, mode=mode,
                        params=cell_params, replicates=values if len(values) > 1 else [])


def split_params(parts: Sequence[str], sep: str = "=") -> tuple[list[str], dict[str, str]]:
    """Name parts without `sep` stay in the name; `key<sep>value` parts become parameters."""
    kept: list[str] = []
    params: dict[str, str] = {}
    for part in parts:
        key, found, value = part.partition(sep)
        if found and key and key not in params:
            params[key] = value
        else:
            kept.append(part)
    return kept, params

"""A run as Bencher Metric Format (BMF): `GET /api/v1/runs/{slug}/bmf`, `benchtrail export RUN`.

    {"<benchmark>": {"<measure>": {"value": v, "lower_value": lo, "upper_value": hi}}}

- benchmark: the cell's scenario ("all scenarios" for a load level's all-scenarios cell), after its variant
  ("agent / ...") when the run has more than one variant, and with " @ <load>" when the cell has a load level;
- a score cell (JMH, Go, pytest-benchmark, Google Benchmark, Criterion, hyperfine, BMF, histories): the measure
  it was read from when it came from BMF or Bencher (the same document comes back); else a time per operation
  is Bencher's `latency` in nanoseconds, operations per time its `throughput` in operations per second, and
  any other unit the cell's mode as a measure of its own, in the cell's unit; bounds are the score ± its error;
- a load-test cell: one measure per metric of the catalog it has (`throughput`, `latency-p99`, `error-rate`,
  ...: the metric's name with '-' for '_'), in the catalog's unit (latency in ms, throughput in requests/s).
"""

from __future__ import annotations

import re
from typing import Any

from benchtrail.ingest.values import value_of
from benchtrail.metrics import CATALOG
from benchtrail.runs.schemas import RunDetail

_TIME_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 6e10}
_SAMPLE_METRICS = [m for m in CATALOG if m not in ("score", "score_error")]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "value"


def _measure(cell: Any) -> tuple[str, float, float]:
    """(measure, factor to the measure's unit) of a score cell: factor applies to score and bounds."""
    params = cell.params or {}
    if params.get("bmf_measure"):
        return str(params["bmf_measure"]), 1.0, 1.0
    unit = (cell.score_unit or "").rstrip(" ↑↓")
    if unit.endswith("/op") and unit[:-3] in _TIME_NS:
        return "latency", _TIME_NS[unit[:-3]], 1.0
    if unit.startswith("ops/") and unit[4:] in _TIME_NS:
        return "throughput", 1e9 / _TIME_NS[unit[4:]], 1.0
    return _slug(cell.mode or unit), 1.0, 1.0


def run_bmf(run: RunDetail) -> dict[str, dict[str, dict[str, float]]]:
    variants = {v.id: v.name for v in run.variants}
    scenarios = {s.id: s.name for s in run.scenarios}
    loads = {lv.id: lv for lv in run.loads}
    several = len(run.variants) > 1
    out: dict[str, dict[str, dict[str, float]]] = {}
    for cell in run.cells:
        scenario = scenarios[cell.scenario_id]
        name = "all scenarios" if scenario == "*" else scenario
        if several:
            name = f"{variants[cell.variant_id]} / {name}"
        load = loads[cell.load_id]
        if load.kind != "none":
            name = f"{name} @ {load.label}"
        measures = out.setdefault(name, {})
        if cell.score is not None:
            measure, factor, _ = _measure(cell)
            if measure in measures:           # two modes read as one Bencher measure: keep each its own
                measure = _slug(cell.mode)
            value: dict[str, float] = {"value": cell.score * factor}
            params = cell.params or {}
            if "lower_value" in params and "upper_value" in params:
                value["lower_value"] = float(params["lower_value"]) * factor
                value["upper_value"] = float(params["upper_value"]) * factor
            elif cell.score_error is not None:
                value["lower_value"] = (cell.score - cell.score_error) * factor
                value["upper_value"] = (cell.score + cell.score_error) * factor
            measures[measure] = value
            continue
        for metric in _SAMPLE_METRICS:
            v = value_of(cell, metric)
            if v is not None:
                measures[metric.replace("_", "-")] = {"value": float(v)}
    return {k: v for k, v in out.items() if v}

"""The metric catalog: every metric a cell, series or trail can carry, with its unit and direction.

Direction says which way is better; analysis uses it to tell a regression from an improvement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["lower", "higher"]


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    unit: str
    direction: Direction
    title: str


PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0), ("p75", 75.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9),
)

_CATALOG = [
    Metric("count", "samples", "higher", "Samples"),
    Metric("errors", "samples", "lower", "Errors"),
    Metric("error_rate", "%", "lower", "Error rate"),
    Metric("throughput", "req/s", "higher", "Throughput"),
    Metric("duration_s", "s", "lower", "Duration"),
    Metric("latency_mean", "ms", "lower", "Mean latency"),
    Metric("latency_min", "ms", "lower", "Min latency"),
    Metric("latency_max", "ms", "lower", "Max latency"),
    *(Metric(f"latency_{n}", "ms", "lower", f"{n.upper().replace('P999', 'P99.9')} latency")
      for n, _ in PERCENTILES),
    Metric("cpu_pct", "%", "lower", "CPU"),
    Metric("cpu_s_per_1k", "CPU-s/1k req", "lower", "CPU seconds per 1,000 requests"),
    Metric("rss_mb", "MB", "lower", "RSS"),
    Metric("heap_mb", "MB", "lower", "Heap"),
    Metric("achieved_rate", "req/s", "higher", "Achieved rate"),
    # JMH: the unit and direction depend on the mode; `score` is resolved per cell (see score_direction).
    Metric("score", "", "higher", "Score"),
    Metric("score_error", "", "lower", "Score error"),
]

CATALOG: dict[str, Metric] = {m.name: m for m in _CATALOG}


def get(name: str) -> Metric:
    try:
        return CATALOG[name]
    except KeyError:
        raise KeyError(f"unknown metric '{name}'; known: {', '.join(sorted(CATALOG))}") from None


# A score's unit marked as better higher or lower by the file it came from (a BMF `throughput` measure, Go's
# `MB/s` from b.SetBytes, a github-action-benchmark `customBiggerIsBetter` entry): the unit then ends with
# one of these, as it is shown. The frontend reads the same marks (frontend/src/lib/metrics.ts).
HIGHER_MARK = " ↑"
LOWER_MARK = " ↓"


def score_direction(unit: str | None) -> Direction:
    """A unit marked ↑ or ↓ says itself; otherwise JMH throughput units (ops/time) are better higher and every
    other (time per op, bytes per op, a count) better lower."""
    if unit and unit.endswith(HIGHER_MARK.strip()):
        return "higher"
    if unit and unit.endswith(LOWER_MARK.strip()):
        return "lower"
    if unit and unit.startswith("ops/"):
        return "higher"
    return "lower"


def marked_unit(unit: str, direction: Direction | None) -> str:
    """`unit` with the mark of `direction` when the unit alone would read the other way (none when it agrees)."""
    if direction is None or score_direction(unit) == direction:
        return unit
    return (unit + (HIGHER_MARK if direction == "higher" else LOWER_MARK)).strip()


def direction_of(metric: str, unit: str | None) -> Direction:
    """Which way is better: a JMH score's by its cells' unit (its mode), every other metric's the catalog's."""
    return score_direction(unit) if metric == "score" else get(metric).direction


def unit_of(metric: str, unit: str | None) -> str:
    """The metric's unit: a JMH score's is its cells' (`unit`, by mode), every other metric's the catalog's."""
    return (unit or "") if metric == "score" else get(metric).unit


def catalog_json() -> list[dict[str, str]]:
    """The catalog as the dashboard reads it (frontend/src/api/metrics.json, written by `npm run gen:api`)."""
    return [{"name": m.name, "unit": m.unit, "direction": m.direction, "title": m.title} for m in _CATALOG]


if __name__ == "__main__":
    import json
    import sys

    json.dump(catalog_json(), sys.stdout, indent=2)
    sys.stdout.write("\n")

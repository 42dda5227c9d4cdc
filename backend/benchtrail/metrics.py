"""The metric catalog: every metric a cell, series or trail can carry, with its unit and direction.

Direction says which way is better; analysis uses it to tell a regression from an improvement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Direction = Literal["lower", "higher"]


@dataclass(frozen=True, slots=True)
class Metric:
    """A metric, and everything that decides where it shows: the one place to add one.

    `stored`: a column of its own in `cells`; otherwise its value is computed when read, from what every cell keeps
    (`percentile`: the nearest-rank percentile of the cell's HDR histogram, and of each repetition's for an
    overhead's interval; `benchtrail.ingest.values`). The flags say which views offer it: `trail` (followed by
    trails: History, alerts, the overhead trend), `compare` (A/B: a run's overheads, Compare, the client's gate),
    `criterion` (pass/fail criteria of plans and uploads), `table`, `chart` and `default` (positions, 0 = not there:
    its column in run tables, its chart in snapshots and images, its place among the metrics analysed for change
    points unless a project says otherwise), `resource` (sampled from processes, judged on the resource cell), `pick`
    (offered in the dashboard's metric pickers: History, Compare, the run's variant matrix; `frontend/src/lib/metrics.ts`
    reads every field from the generated `metrics.json`); `family`: a load test's metric, or a micro-benchmark's
    score (JMH and the like), which History offers apart."""

    name: str
    unit: str
    direction: Direction
    title: str
    stored: bool = True
    percentile: float | None = None
    trail: bool = True
    compare: bool = True
    criterion: bool = False
    table: int = 0
    chart: int = 0
    default: int = 0
    resource: bool = False
    pick: bool = False
    family: Literal["load", "score"] = "load"

    @property
    def from_histogram(self) -> bool:
        """A statistic of the latency distribution, which each repetition's histogram gives (the mean, percentiles)."""
        return self.percentile is not None or self.name == "latency_mean"


PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0), ("p75", 75.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9),
)
# The percentiles' places: P75 leads tables and charts and is analysed first; P99 is analysed too.
_PERCENTILE_PLACES = {"p75": {"table": 5, "chart": 1, "default": 1}, "p99": {"default": 2}}

_CATALOG = [
    Metric("count", "samples", "higher", "Samples"),
    Metric("errors", "samples", "lower", "Errors", pick=True),
    # The failures in percent of the requests: computed from `errors` and `count`; compared, never a trail.
    Metric("error_rate", "%", "lower", "Error rate", stored=False, trail=False, criterion=True, pick=True),
    Metric("throughput", "req/s", "higher", "Throughput", criterion=True, table=6, chart=3, default=3, pick=True),
    Metric("duration_s", "s", "lower", "Duration"),
    Metric("latency_mean", "ms", "lower", "Mean latency", criterion=True, table=4, chart=2, pick=True),
    Metric("latency_min", "ms", "lower", "Min latency"),
    Metric("latency_max", "ms", "lower", "Max latency", criterion=True),
    *(Metric(f"latency_{n}", "ms", "lower", f"{n.upper().replace('P999', 'P99.9')} latency", percentile=q,
             criterion=True, pick=True, **_PERCENTILE_PLACES.get(n, {})) for n, q in PERCENTILES),
    Metric("cpu_pct", "%", "lower", "CPU", criterion=True, resource=True, table=1, chart=4, default=5, pick=True),
    Metric("cpu_s_per_1k", "CPU-s/1k req", "lower", "CPU seconds per 1,000 requests", criterion=True, resource=True, pick=True),
    Metric("rss_mb", "MB", "lower", "RSS", criterion=True, resource=True, table=3, pick=True),
    Metric("heap_mb", "MB", "lower", "Heap", criterion=True, resource=True, table=2, chart=5, pick=True),
    Metric("achieved_rate", "req/s", "higher", "Achieved rate", criterion=True, pick=True),
    # JMH and micro-benchmarks: the unit and direction depend on the mode; `score` is resolved per cell
    # (see score_direction).
    Metric("score", "", "higher", "Score", table=7, chart=6, default=4, pick=True, family="score"),
    Metric("score_error", "", "lower", "Score error", family="score"),
]

CATALOG: dict[str, Metric] = {m.name: m for m in _CATALOG}


def register(metric: Metric) -> None:
    """Add `metric` to the catalog (before the modules that read it are imported: their lists are built from it)."""
    _CATALOG.append(metric)
    CATALOG[metric.name] = metric


def names(flag: str) -> tuple[str, ...]:
    """The catalog's metrics a view offers (`flag`: trail, compare, criterion, resource, stored, pick), in catalog order;
    `table`, `chart` and `default` in their positions."""
    if flag in ("table", "chart", "default"):
        return tuple(m.name for m in sorted((m for m in _CATALOG if getattr(m, flag)), key=lambda m: getattr(m, flag)))
    return tuple(m.name for m in _CATALOG if getattr(m, flag))


# Which metric a comparison of two runs shows when none is asked for: per cell, the first of these it has.
COMPARE_PREFERENCE = ("latency_p75", "score", "throughput")


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


def catalog_json() -> list[dict[str, object]]:
    """The catalog as the dashboard reads it (frontend/src/api/metrics.json, written by `npm run gen:api`): every
    field, so the dashboard's pickers and tables come from it too."""
    return [{f: getattr(m, f) for f in m.__dataclass_fields__} for m in _CATALOG]


if __name__ == "__main__":
    import json
    import sys

    json.dump(catalog_json(), sys.stdout, indent=2)
    sys.stdout.write("\n")

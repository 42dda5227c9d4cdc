"""Pass/fail criteria, judged on a run's cells as ingest wrote them — for a plan's runs and for uploads
that declare criteria alike, so a criterion reads the same numbers the run page shows.

A criterion is judged once per cell it selects: its variant (default every variant) and its scenario
(default the load level's all-scenarios cell), at every load level. Definitions:
- latency_p50…p999, latency_mean, latency_max, throughput: the cell's own values (nearest-rank
  percentiles from its HDR histogram, `ingest.histogram`), over every sample of every repetition.
- error_rate: (errors + unanswered) / (count + unanswered) · 100, where unanswered are requests a hey
  CSV leaves out (it lists only requests that got a response; the load's `requests` says how many
  were sent).
- achieved_rate: the mean over the cell's files of (n − 1) / (last start − first start), the offered
  rate; a reported `achieved_rate` when the cell has no samples.
- cpu_pct, rss_mb, heap_mb, cpu_s_per_1k: the variant's resource cell of that load level (sampled
  over the whole load, so a scenario's criterion reads its load level's resources).
- overhead: the variant's value minus the reference's value of the same scenario and load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from benchtrail import metrics
from benchtrail.ingest.values import value_of

RESOURCE_METRICS = frozenset(metrics.names("resource"))
ALL = "*"   # the all-scenarios cell of a load level (`ingest.service.ALL_SCENARIOS`)


class CriterionLike(Protocol):
    """What a criterion gives (`benchtrail.plans.model.Criterion`)."""

    metric: str
    op: str
    value: float
    variant: str | None
    scenario: str | None
    overhead: bool

    @property
    def text(self) -> str: ...

    def holds(self, observed: float) -> bool: ...


@dataclass(frozen=True, slots=True)
class CellView:
    """One written cell with what the criteria need besides its values."""

    values: Mapping[str, Any]
    load: str                               # the load level's label
    unanswered: int = 0                     # requests with no row in the file (hey CSV)
    arrival_rates: tuple[float, ...] = ()   # per file (repetition) of the cell


Key = tuple[str, str, str]   # (variant, scenario or "*", load key)


def observed(metric: str, cells: Mapping[Key, CellView], key: Key) -> float | None:
    variant, scenario, load_key = key
    if metric in RESOURCE_METRICS:
        cell = cells.get((variant, ALL, load_key))
        if cell is None:
            return None
        value = cell.values.get(metric)
        if value is None:
            value = (cell.values.get("extra") or {}).get(metric)
        return float(value) if value is not None else None
    cell = cells.get(key)
    if cell is None:
        return None
    v = cell.values
    if metric == "error_rate":
        count = (v.get("count") or 0) + cell.unanswered
        return 100.0 * ((v.get("errors") or 0) + cell.unanswered) / count if count else None
    if metric == "achieved_rate":
        if cell.arrival_rates:
            return sum(cell.arrival_rates) / len(cell.arrival_rates)
        value = v.get("achieved_rate")
        return float(value) if value is not None else None
    return value_of(v, metric)


def judge(criteria: Sequence[CriterionLike], cells: Mapping[Key, CellView], *,
          reference: str | None) -> list[dict[str, Any]]:
    """One row per criterion and selected cell, in criterion order, then variant, scenario, load as the
    cells are ordered: `criterion`, `variant`, `scenario` (None: all scenarios), `load`, `observed`,
    `ok` (None when the cell lacks the metric) and `detail`."""
    rows: list[dict[str, Any]] = []
    for c in criteria:
        scenario = c.scenario if c.scenario is not None else ALL
        for key in cells:
            variant, cell_scenario, load_key = key
            if cell_scenario != scenario or c.variant not in (None, variant):
                continue
            if c.overhead and (reference is None or variant == reference):
                continue
            value = observed(c.metric, cells, key)
            if c.overhead and value is not None:
                ref = observed(c.metric, cells, (reference or "", cell_scenario, load_key))
                value = None if ref is None else value - ref
            row: dict[str, Any] = {"criterion": c.text, "variant": variant,
                                   "scenario": None if cell_scenario == ALL else cell_scenario,
                                   "load": cells[key].load, "observed": value, "source": "ingest"}
            if value is None:
                row |= {"ok": None, "detail": "not measured"}
            else:
                ok = c.holds(value)
                row |= {"ok": ok, "detail": f"{c.metric}{' overhead' if c.overhead else ''} = {value:.3f} "
                                            f"({'pass' if ok else 'FAIL'}: {c.op} {c.value:g})"}
            rows.append(row)
    return rows


def passed(rows: Sequence[Mapping[str, Any]]) -> bool:
    """A run passes its criteria when no judged row failed."""
    return all(r.get("ok") is not False for r in rows)

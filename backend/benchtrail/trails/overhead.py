"""The A/B result of one metric between two cells (a variant vs its reference, or run b vs run a).

Which evidence is used, best first:
- latency percentiles/mean of sample-based cells: `analysis.compare` over the cells' repetitions
  (`Cell.repetitions`: each repetition's exact statistics, histogram, position in the run and, for a
  single repetition, its timeline): a t interval over the per-repetition values, or a block
  bootstrap over time for one repetition per side (see `benchtrail.analysis.ab`). Cells ingested
  before repetitions were stored fall back to the per-repetition summaries in `extra`, and a lone
  histogram gives no interval ("too noisy to tell"): requests are never resampled as if independent;
- throughput, errors and the error rate of sample-based cells: each repetition's own value (its
  requests over its duration, its errors, its errors over its requests), compared over the
  repetitions like latency;
- per-repetition values on both sides (JMH iterations): `compare` over the repetitions;
- a JMH score ± error on both sides: JMH's error is the half-width of a 99.9% Student-t interval over
  `cnt` measurements, so each side's standard error is error / t(0.9995, cnt-1); the difference gets
  a Welch interval;
- otherwise only the two values: the difference without an interval ("too noisy to tell").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from benchtrail import metrics
from benchtrail.analysis import AbResult, Replicates, compare
from benchtrail.analysis.ab import Repetition, Timeline, stat_key
from benchtrail.analysis.ab import _verdict as verdict_of  # the package's one definition of the words
from benchtrail.ingest.values import value_of
from benchtrail.models import Cell

HISTOGRAM_METRICS = frozenset(m.name for m in metrics.CATALOG.values() if m.from_histogram)
# What every sample-based repetition counts (ingest's `REPETITION_STATS`), and the error rate derived from
# two of them: compared over the repetitions, one value each.
COUNTED_METRICS = frozenset({"count", "errors", "duration_s", "throughput", "error_rate"})
_Z = 1.959963984540054 + 0.8416212335729143  # 95% two-sided, 80% power


@dataclass(frozen=True, slots=True)
class CellEvidence:
    """What a cell offers for one metric; built from a Cell row without its other columns."""

    value: float
    histogram: str | None = None
    replicates: tuple[float, ...] = ()
    error: float | None = None
    cnt: int | None = None
    unit: str | None = None
    repetitions: tuple[Repetition, ...] = ()


def repetitions_of(cell: Cell, metric: str) -> tuple[Repetition, ...]:
    """The cell's repetitions for a latency metric, statistics in µs (the histograms' unit)."""
    stat = stat_key(None) if metric == "latency_mean" else metric.removeprefix("latency_")
    out = []
    records = getattr(cell, "repetitions", None) or []
    for i, rec in enumerate(records):
        value = rec.get(metric)
        timeline = rec.get("timeline")
        # A cell's only repetition shares the cell's histogram.
        hist = rec.get("histogram") or (cell.histogram if len(records) == 1 else None)
        out.append(Repetition(
            histogram=hist, stats={stat: value * 1000.0} if value is not None else {},
            position=rec.get("position", i), timeline=Timeline.from_json(timeline) if timeline else None,
            step=rec.get("latency_step_us")))
    if out:
        return tuple(out)
    # Cells ingested before `repetitions` existed: the per-repetition summaries in `extra` (no p99.9).
    legacy = (cell.extra or {}).get("repetitions") or []
    if len(legacy) >= 2 and all(r.get(metric) is not None for r in legacy):
        return tuple(Repetition(stats={stat: r[metric] * 1000.0}, position=i) for i, r in enumerate(legacy))
    return ()


def counted_repetitions(cell: Cell, metric: str) -> tuple[Repetition, ...]:
    """One value per sample-based repetition of a counted metric (`COUNTED_METRICS`), each at its
    position in the run; none unless every one of 2+ repetitions has it."""
    out = []
    for i, rec in enumerate(getattr(cell, "repetitions", None) or []):
        value = _error_rate(rec.get("errors"), rec.get("count")) if metric == "error_rate" else rec.get(metric)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return ()
        out.append(Repetition(stats={"mean": float(value)}, position=rec.get("position", i)))
    return tuple(out) if len(out) >= 2 else ()


def _error_rate(errors: Any, count: Any) -> float | None:
    """Failed requests in percent of all, as the run document's `error_rate`."""
    ok = isinstance(errors, (int, float)) and isinstance(count, (int, float)) and count > 0
    return errors * 100.0 / count if ok else None


def _repetitions(cell: Cell, metric: str) -> tuple[Repetition, ...]:
    if metric in HISTOGRAM_METRICS:
        return repetitions_of(cell, metric)
    if metric in COUNTED_METRICS:
        return counted_repetitions(cell, metric) or reported_repetitions(cell, metric)
    return reported_repetitions(cell, metric)


def evidence(cell: Cell, metric: str) -> CellEvidence | None:
    value = value_of(cell, metric)
    if value is None or not math.isfinite(value):
        return None
    cnt = (cell.params or {}).get("cnt")
    return CellEvidence(
        value=float(value),
        repetitions=_repetitions(cell, metric),
        histogram=cell.histogram if metric in HISTOGRAM_METRICS else None,
        replicates=tuple(cell.replicates or ()) if metric == "score" else (),
        error=cell.score_error if metric == "score" else None,
        cnt=int(cnt) if cnt is not None and str(cnt).isdigit() else None,
        unit=cell.score_unit)


def reported_repetitions(cell: Cell, metric: str) -> tuple[Repetition, ...]:
    """One value per repetition of a reported metric (a resource sampled in each repetition: CPU, heap,
    RSS; a summary's throughput), as ingest keeps them in `extra.repetitions_reported`: compared over
    repetitions like latency, so the interval holds the run-to-run noise."""
    values = [r.get(metric) for r in ((cell.extra or {}).get("repetitions_reported") or [])]
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return tuple(Repetition(stats={"mean": v}) for v in finite) if len(finite) >= 2 else ()


def ab(ref: CellEvidence, var: CellEvidence, metric: str) -> AbResult:
    direction = metrics.direction_of(metric, var.unit or ref.unit)
    if ref.repetitions and var.repetitions:
        scale = 1e-3 if metric in HISTOGRAM_METRICS else 1.0   # histograms and their statistics are in µs
        return compare(list(ref.repetitions), list(var.repetitions), direction=direction, kind=metric, scale=scale)
    if ref.histogram and var.histogram:
        return compare(ref.histogram, var.histogram, direction=direction, kind=metric, scale=1e-3)
    if len(ref.replicates) >= 2 and len(var.replicates) >= 2:
        return compare(Replicates(ref.replicates), Replicates(var.replicates), direction=direction, kind="mean")
    if _has_error(ref) and _has_error(var):
        return _from_score_error(ref, var, direction)
    return _point_only(ref, var, direction)


def _has_error(e: CellEvidence) -> bool:
    return e.error is not None and math.isfinite(e.error) and e.cnt is not None and e.cnt >= 2


def _from_score_error(ref: CellEvidence, var: CellEvidence, direction: metrics.Direction) -> AbResult:
    from scipy import stats as sps   # here, not at the top: see analysis/ab.py
    assert ref.error is not None and var.error is not None and ref.cnt and var.cnt
    se_r = ref.error / float(sps.t.ppf(0.9995, ref.cnt - 1))
    se_v = var.error / float(sps.t.ppf(0.9995, var.cnt - 1))
    se2 = se_r ** 2 + se_v ** 2
    diff = var.value - ref.value
    if se2 > 0:
        df = se2 ** 2 / (se_r ** 4 / (ref.cnt - 1) + se_v ** 4 / (var.cnt - 1))
        half = float(sps.t.ppf(0.975, df)) * math.sqrt(se2)
    else:
        half = 0.0
    return _result(ref.value, var.value, diff - half, diff + half, _Z * math.sqrt(se2), direction,
                   ref.cnt, var.cnt, "welch-score-error")


def _point_only(ref: CellEvidence, var: CellEvidence, direction: metrics.Direction) -> AbResult:
    return _result(ref.value, var.value, math.nan, math.nan, math.nan, direction, 1, 1, "point")


def _result(ref: float, var: float, lo: float, hi: float, mde: float, direction: metrics.Direction,
            n_ref: int, n_var: int, method: str) -> AbResult:
    diff = var - ref
    base = abs(ref)
    verdict = verdict_of(diff, lo, hi, ref) if math.isfinite(lo) else "too noisy to tell"
    worse = None
    if verdict not in ("no difference", "too noisy to tell"):
        worse = diff > 0 if direction == "lower" else diff < 0
    def rel(v: float) -> float:
        return v / base if base else math.nan

    return AbResult(statistic="mean", reference=ref, variant=var, abs_diff=diff, rel_diff=rel(diff),
                    ci_low=lo, ci_high=hi, ci_low_rel=rel(lo), ci_high_rel=rel(hi), mw_p=None,
                    cliffs_delta=None, verdict=verdict, worse=worse, mde=mde, mde_rel=rel(mde),
                    n_ref=n_ref, n_var=n_var, method=method)


def to_dict(result: AbResult) -> dict[str, Any]:
    """JSON-safe: NaN and infinities become None; the per-repetition values behind the result are
    grouped under `repetitions` (as the API's `AbOut` shows them)."""
    out = {k: _safe(v) for k, v in dataclasses.asdict(result).items()
           if k not in ("ref_values", "var_values", "ref_positions", "var_positions")}
    out["repetitions"] = {
        "reference": [_safe(v) for v in result.ref_values], "variant": [_safe(v) for v in result.var_values],
        "reference_positions": list(result.ref_positions), "variant_positions": list(result.var_positions),
    }
    return out


def _safe(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v

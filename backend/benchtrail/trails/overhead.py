"""The A/B result of one metric between two cells (a variant vs its reference, or run b vs run a).

Which evidence is used, best first:
- latency percentiles/mean with an HDR histogram on both sides: `analysis.compare` bootstraps the
  histograms (Mann-Whitney and Cliff's delta over the samples);
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

from scipy import stats as sps

from benchtrail import metrics
from benchtrail.analysis import AbResult, Replicates, compare
from benchtrail.analysis.ab import _verdict as verdict_of  # the package's one definition of the words
from benchtrail.models import Cell

HISTOGRAM_METRICS = frozenset({"latency_mean", "latency_p50", "latency_p75", "latency_p90", "latency_p95",
                               "latency_p99", "latency_p999"})
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


def evidence(cell: Cell, metric: str) -> CellEvidence | None:
    value = getattr(cell, metric)
    if value is None or not math.isfinite(value):
        return None
    cnt = (cell.params or {}).get("cnt")
    return CellEvidence(
        value=float(value),
        histogram=cell.histogram if metric in HISTOGRAM_METRICS else None,
        replicates=tuple(cell.replicates or ()) if metric == "score" else (),
        error=cell.score_error if metric == "score" else None,
        cnt=int(cnt) if cnt is not None and str(cnt).isdigit() else None,
        unit=cell.score_unit)


def direction_of(metric: str, unit: str | None) -> metrics.Direction:
    return metrics.score_direction(unit) if metric == "score" else metrics.get(metric).direction


def ab(ref: CellEvidence, var: CellEvidence, metric: str) -> AbResult:
    direction = direction_of(metric, var.unit or ref.unit)
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
    rel = (lambda v: v / base if base else math.nan)
    return AbResult(statistic="mean", reference=ref, variant=var, abs_diff=diff, rel_diff=rel(diff),
                    ci_low=lo, ci_high=hi, ci_low_rel=rel(lo), ci_high_rel=rel(hi), mw_p=None,
                    cliffs_delta=None, verdict=verdict, worse=worse, mde=mde, mde_rel=rel(mde),
                    n_ref=n_ref, n_var=n_var, method=method)


def to_dict(result: AbResult) -> dict[str, Any]:
    """JSON-safe: NaN and infinities become None."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in dataclasses.asdict(result).items()}

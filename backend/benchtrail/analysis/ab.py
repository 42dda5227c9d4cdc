"""A/B comparison of one cell: variant vs reference of the same run.

Inputs per arm, in one of these forms:
- raw samples: a 1-D array of per-request values (one repetition);
- `Replicates`: one value of the metric per repetition (e.g. each repetition's P75, a JMH iteration);
- an HDR histogram: a base64 string as `HdrHistogram.encode()` writes it (one repetition);
- several repetitions of samples or histograms: a list of arrays or of base64 strings.

The 95% interval is a seeded percentile bootstrap of the difference of the statistic (the mean, or the
percentile named by `kind`). With 3 or more repetitions per arm it resamples repetitions, so run-to-run
noise is in the interval; with fewer it resamples samples (histogram buckets by their counts). Resampling
repetitions from few of them gives intervals that are too narrow, so the quantile levels are widened
by Hesterberg's small-sample correction (the "expanded percentile" bootstrap).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Union

import numpy as np
from numpy.typing import NDArray
from scipy import stats as sps

from benchtrail.analysis.distributions import (
    Distribution,
    cliffs_delta_and_u,
    from_hdr,
    from_samples,
    mann_whitney_p,
    merge,
    percentiles_from_counts,
)
from benchtrail.metrics import Direction

N_BOOT = 2000
SEED = 20240601
# Relative differences below this are reported as "no difference"; the HDR precision is 0.1%.
NEGLIGIBLE_REL = 0.01
SMALL_REL = 0.05
MEDIUM_REL = 0.20
_POISSON_FROM = 5000
_MEAN_GROUPS = 512
_Z80 = 0.8416212335729143   # power 80%
_Z975 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Replicates:
    """One value of the metric per repetition."""

    values: Sequence[float]


ArmInput = Union[str, bytes, Replicates, Sequence[float], NDArray[np.float64], Sequence[str],
                 Sequence[Sequence[float]]]
Verdict = Literal["no difference", "small", "medium", "large", "too noisy to tell"]


@dataclass(frozen=True, slots=True)
class AbResult:
    statistic: str                 # "mean" or "p75", "p99.9", ...
    reference: float               # the statistic of each arm
    variant: float
    abs_diff: float                # variant - reference
    rel_diff: float                # abs_diff / |reference|; nan when reference == 0
    ci_low: float                  # 95% interval of abs_diff
    ci_high: float
    ci_low_rel: float              # the same interval relative to |reference|
    ci_high_rel: float
    mw_p: float | None             # Mann-Whitney two-sided p, None without samples
    cliffs_delta: float | None     # P(variant > reference) - P(variant < reference)
    verdict: Verdict
    worse: bool | None             # the variant is worse for the metric's direction; None if no verdict
    mde: float                     # smallest |abs_diff| detectable with 80% power at 5%
    mde_rel: float
    n_ref: int                     # samples, or repetitions when bootstrapping repetitions
    n_var: int
    method: str                    # bootstrap-repetitions | bootstrap-samples | bootstrap-histogram


def parse_kind(kind: str) -> tuple[str, float | None]:
    """'mean', 'latency_mean', 'throughput' -> mean; 'p75', 'latency_p999', 99 -> that percentile."""
    match = re.search(r"p(\d+)$", str(kind))
    if match is None:
        return "mean", None
    digits = match.group(1)
    q = float(digits) if len(digits) <= 2 else float(digits[:2] + "." + digits[2:])
    return f"p{q:g}", q


@dataclass(slots=True)
class _Arm:
    reps: list[Distribution] | None     # repetitions as distributions
    scalars: NDArray[np.float64] | None  # one value per repetition (Replicates)
    kind: str                           # samples | histogram | replicates


def _arm(data: ArmInput, scale: float) -> _Arm:
    if isinstance(data, Replicates):
        vals = np.asarray(data.values, dtype=np.float64) * scale
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            raise ValueError("no replicate values")
        return _Arm(None, vals, "replicates")
    if isinstance(data, (str, bytes)):
        return _Arm([from_hdr(data, scale)], None, "histogram")
    if isinstance(data, np.ndarray) and data.ndim == 1:
        return _Arm([from_samples(data * scale)], None, "samples")
    items = list(data)
    if not items:
        raise ValueError("empty input")
    if all(isinstance(i, (str, bytes)) for i in items):
        return _Arm([from_hdr(i, scale) for i in items], None, "histogram")
    if all(np.ndim(i) == 1 for i in items):
        return _Arm([from_samples(np.asarray(i, dtype=np.float64) * scale) for i in items], None, "samples")
    return _Arm([from_samples(np.asarray(items, dtype=np.float64) * scale)], None, "samples")


def _stat(dist: Distribution, q: float | None) -> float:
    return dist.mean() if q is None else dist.percentile(q)


def _support(dists: list[Distribution]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Counts of every repetition on the union of their values: a (repetitions x values) matrix."""
    values = np.unique(np.concatenate([d.values for d in dists]))
    mat = np.zeros((len(dists), values.size), dtype=np.int64)
    for i, d in enumerate(dists):
        mat[i, np.searchsorted(values, d.values)] = d.counts
    return values, mat


def _boot_stat_from_counts(values: NDArray[np.float64], counts: NDArray[np.int64], q: float | None) -> NDArray[np.float64]:
    if q is None:
        return (counts @ values) / counts.sum(axis=1)
    return percentiles_from_counts(values, counts, q)


def _boot_samples(dist: Distribution, q: float | None, rng: np.random.Generator, b: int) -> NDArray[np.float64]:
    """Bootstrap of the statistic over samples. Large arms use the Poisson bootstrap (each bucket's
    count redrawn as Poisson(count); the standard large-n equivalent of the multinomial), which lets
    buckets that cannot move the statistic be pooled exactly (a sum of Poissons is Poisson): far
    below/above a percentile everything collapses to two buckets; for the mean, adjacent buckets
    are pooled into at most `_MEAN_GROUPS` groups at their weighted mean (HDR buckets are 0.1% wide,
    so the variance lost within a group is negligible)."""
    values, counts = dist.values, dist.counts
    if dist.n < _POISSON_FROM:
        draws = rng.multinomial(dist.n, counts / dist.n, size=b)
        return _boot_stat_from_counts(values, draws, q)
    if q is None:
        if values.size > _MEAN_GROUPS:
            group = np.arange(values.size) * _MEAN_GROUPS // values.size
            sums = np.bincount(group, weights=counts * values)
            counts = np.bincount(group, weights=counts)
            values = sums / counts
        draws = rng.poisson(counts, size=(b, values.size)).astype(np.float64)
        return (draws @ values) / np.maximum(draws.sum(axis=1), 1.0)
    cdf = np.cumsum(counts) / dist.n
    half = 8.0 * math.sqrt(max(q / 100 * (1 - q / 100), 1.0 / dist.n) / dist.n) + 2.0 / dist.n
    lo = int(np.searchsorted(cdf, max(q / 100 - half, 0.0), side="left"))
    hi = int(np.searchsorted(cdf, min(q / 100 + half, 1.0), side="left")) + 1
    lo, hi = max(lo - 1, 0), min(hi + 1, values.size)
    pooled = np.concatenate([[counts[:lo].sum()], counts[lo:hi], [counts[hi:].sum()]])
    band_values = np.concatenate([[values[lo]], values[lo:hi], [values[hi - 1]]])
    draws = rng.poisson(pooled, size=(b, pooled.size))
    return percentiles_from_counts(band_values, draws, q)


def _boot_reps(arm: _Arm, q: float | None, rng: np.random.Generator, b: int) -> NDArray[np.float64]:
    if arm.scalars is not None:
        idx = rng.integers(0, arm.scalars.size, size=(b, arm.scalars.size))
        return arm.scalars[idx].mean(axis=1)
    assert arm.reps is not None
    values, mat = _support(arm.reps)
    r = len(arm.reps)
    mult = rng.multinomial(r, np.full(r, 1.0 / r), size=b)   # how often each repetition is drawn
    return _boot_stat_from_counts(values, mult @ mat, q)


def _expanded_alpha(n: int, alpha: float = 0.05) -> float:
    """Hesterberg (2015): use the normal tail level whose z equals sqrt(n/(n-1)) * t_{n-1}."""
    if n < 2:
        return alpha
    z = math.sqrt(n / (n - 1)) * float(sps.t.ppf(1 - alpha / 2, n - 1))
    return float(2 * sps.norm.sf(z))


def _verdict(abs_diff: float, lo: float, hi: float, ref: float) -> Verdict:
    base = abs(ref) if ref != 0 else max(abs(lo), abs(hi), 1e-300)
    if lo <= 0 <= hi:
        if max(abs(lo), abs(hi)) / base < NEGLIGIBLE_REL:
            return "no difference"
        return "too noisy to tell"
    rel = abs(abs_diff) / base
    if rel < NEGLIGIBLE_REL:
        return "no difference"
    if rel < SMALL_REL:
        return "small"
    if rel < MEDIUM_REL:
        return "medium"
    return "large"


def compare(reference: ArmInput, variant: ArmInput, *, direction: Direction = "lower", kind: str = "mean",
            scale: float = 1.0, n_boot: int = N_BOOT, seed: int = SEED) -> AbResult:
    """Compare a variant with the reference of the same cell. `kind` names the statistic ('mean',
    'p75', or a metric name such as 'latency_p99'); `scale` multiplies the inputs (e.g. 1e-3 turns
    HDR microseconds into milliseconds). Deterministic for a given seed."""
    statistic, q = parse_kind(kind)
    ref, var = _arm(reference, scale), _arm(variant, scale)
    rng = np.random.default_rng(seed)

    def count(a: _Arm) -> int:
        return a.scalars.size if a.scalars is not None else len(a.reps or [])

    by_reps = ref.scalars is not None or var.scalars is not None or min(count(ref), count(var)) >= 3
    if by_reps:
        ref_point = float(ref.scalars.mean()) if ref.scalars is not None else _stat(merge(ref.reps or []), q)
        var_point = float(var.scalars.mean()) if var.scalars is not None else _stat(merge(var.reps or []), q)
        diffs = _boot_reps(var, q, rng, n_boot) - _boot_reps(ref, q, rng, n_boot)
        alpha = _expanded_alpha(min(count(ref), count(var)))
        n_ref, n_var, method = count(ref), count(var), "bootstrap-repetitions"
    else:
        ref_d, var_d = merge(ref.reps or []), merge(var.reps or [])
        ref_point, var_point = _stat(ref_d, q), _stat(var_d, q)
        diffs = _boot_samples(var_d, q, rng, n_boot) - _boot_samples(ref_d, q, rng, n_boot)
        alpha = 0.05
        n_ref, n_var = ref_d.n, var_d.n
        method = "bootstrap-histogram" if "histogram" in (ref.kind, var.kind) else "bootstrap-samples"

    lo, hi = (float(v) for v in np.quantile(diffs, [alpha / 2, 1 - alpha / 2]))
    abs_diff = var_point - ref_point
    base = abs(ref_point)
    rel = abs_diff / base if base else math.nan
    mw_p, delta = _rank_tests(ref, var)
    verdict = _verdict(abs_diff, lo, hi, ref_point)
    worse = None
    if verdict not in ("no difference", "too noisy to tell"):
        worse = abs_diff > 0 if direction == "lower" else abs_diff < 0
    mde = (_Z975 + _Z80) * float(np.std(diffs, ddof=1))
    return AbResult(
        statistic=statistic, reference=ref_point, variant=var_point, abs_diff=abs_diff, rel_diff=rel,
        ci_low=lo, ci_high=hi,
        ci_low_rel=lo / base if base else math.nan, ci_high_rel=hi / base if base else math.nan,
        mw_p=mw_p, cliffs_delta=delta, verdict=verdict, worse=worse,
        mde=mde, mde_rel=mde / base if base else math.nan,
        n_ref=n_ref, n_var=n_var, method=method,
    )


def _rank_tests(ref: _Arm, var: _Arm) -> tuple[float | None, float | None]:
    """Mann-Whitney p and Cliff's delta over the samples (or the per-repetition values)."""
    if ref.scalars is not None or var.scalars is not None:
        if ref.scalars is None or var.scalars is None or min(ref.scalars.size, var.scalars.size) < 2:
            return None, None
        a, b = ref.scalars, var.scalars
        p = float(sps.mannwhitneyu(b, a, alternative="two-sided").pvalue)
        delta, _ = cliffs_delta_and_u(from_samples(a), from_samples(b))
        return p, delta
    ref_d, var_d = merge(ref.reps or []), merge(var.reps or [])
    delta, u = cliffs_delta_and_u(ref_d, var_d)
    return mann_whitney_p(ref_d, var_d, u), delta

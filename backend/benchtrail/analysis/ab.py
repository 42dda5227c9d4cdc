"""A/B comparison of one cell: variant vs reference (of the same run, or run b vs run a).

The unit of evidence is the **repetition**: latency inside one load test is autocorrelated and
runs differ from each other by a few percent, so the requests of a run are not independent
observations and are never resampled as if they were. Inputs per arm:

- `Repetition`s (what ingest stores per cell, `Cell.repetitions`): each repetition's histogram or
  raw samples, its exact statistics, its position in the run and, for a single repetition, its
  time-ordered per-interval summary (`Timeline`);
- `Replicates`: one value of the metric per repetition (e.g. JMH iterations);
- for convenience a 1-D array of time-ordered samples (one repetition), or a list of arrays or of
  base64 HDR histograms (one per repetition).

Methods (`AbResult.method`), chosen by the evidence, never by the outcome:

- ``t-repetitions`` (2+ repetitions on at least one side): each repetition gives one value
  of the statistic (its own P75, mean, ...); the difference of the arms' means of those values gets
  a Student t interval and p-value (Welch's when the arms have different numbers of repetitions;
  the pooled variance when they are equal, where it is exact under equal variances and robust
  otherwise, while Welch's is conservative with 3 + 3);
- ``paired-t-repetitions`` (interleaved repetitions with `PAIRED_MIN_PAIRS` or more pairs): the
  i-th variant repetition is paired with the i-th reference repetition by position. With fewer
  pairs the paired test loses more degrees of freedom than pairing gains unless consecutive
  repetitions correlate strongly (ρ > 0.58 for 3 pairs), so they are compared unpaired;
- ``block-bootstrap-time`` (one repetition on each side): a stationary block bootstrap (Politis and
  Romano, as `arch.bootstrap.StationaryBootstrap`) over the repetition's time-ordered intervals, the
  mean block length chosen by `arch.bootstrap.optimal_block_length` on that repetition's
  per-interval series. Percentiles are resampled through their Bahadur representation: the resampled share
  of samples at or below the repetition's percentile is mapped back through the repetition's own
  distribution. When the effective number of independent intervals (intervals / block length) is
  below `MIN_EFFECTIVE_N` the verdict is "too noisy to tell". One repetition cannot show
  run-to-run variation: this interval only covers the noise within the run;
- ``bootstrap-replicates`` (`Replicates`): the seeded percentile bootstrap over the values, widened
  by Hesterberg's small-sample correction (the "expanded percentile" bootstrap);
- ``no-time-order``: a single repetition without its time order (a histogram alone): no interval.

Values recorded in steps: a tool that writes latency in steps of h (JMeter whole ms, hey 0.1 ms) makes
every percentile a whole number of steps, so repetitions whose true values differ by less than a step
show the same value and no variance (an interval of zero width, p = 0, from two repetitions a side).
When the repetitions say their step (`Repetition.step`), each arm's percentile is taken as known to
within its rounding, uniform over one step (variance h²/12), added to the variance of the difference
for every method; it does not shrink with more repetitions, since repetitions closer than a step round
alike. The mean of many samples is not rounded this way and gets nothing added.

`p_value` is the p-value of the test the interval comes from. Cliff's delta and the Mann-Whitney p
are over the per-repetition values (with one repetition per side Cliff's delta describes the
samples and there is no Mann-Whitney p). The minimum detectable effect is the smallest |difference|
found with 80% power at 5%: (t(0.975, df) + t(0.80, df)) · standard error of the difference (normal
quantiles for the bootstraps).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

import numpy as np
from numpy.typing import NDArray

# scipy.stats is imported in the functions that use it: every API process imports this package (the trail and
# profile modules name its types), and scipy.stats was 0.7 of the 2.4 CPU-seconds of its start.

from benchtrail.analysis.direction import Direction
from benchtrail.analysis.distributions import (
    Distribution,
    cliffs_delta_and_u,
    from_hdr,
    from_samples,
)

N_BOOT = 2000
SEED = 20240601
# Relative differences below this are reported as "no difference"; the HDR precision is 0.1%.
NEGLIGIBLE_REL = 0.01
SMALL_REL = 0.05
MEDIUM_REL = 0.20
PAIRED_MIN_PAIRS = 5
MIN_EFFECTIVE_N = 10      # independent intervals a single repetition must offer for a verdict
MIN_INTERVALS = 20        # intervals needed to estimate the autocorrelation at all
SAMPLE_CHUNKS = 200       # raw samples of one repetition are summarised in this many time-ordered chunks
_Z80 = 0.8416212335729143   # power 80%
_Z975 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Replicates:
    """One value of the metric per repetition."""

    values: Sequence[float]


@dataclass(frozen=True, slots=True)
class Timeline:
    """A repetition's time-ordered per-interval summary, as ingest stores it (`Cell.repetitions[i]
    ["timeline"]`): per interval the number of samples, the sum of their latencies and, for each
    percentile the cell reports, how many samples were at or below the repetition's own value of
    that percentile (`thresholds`, in the same unit as `sums`)."""

    counts: Sequence[int]
    sums: Sequence[float]
    at_or_below: Mapping[str, Sequence[int]] = field(default_factory=dict)   # 'p75' -> per interval
    thresholds: Mapping[str, float] = field(default_factory=dict)           # 'p75' -> value

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Timeline:
        return cls(counts=list(data["count"]), sums=list(data["sum"]),  # type: ignore[call-overload]
                   at_or_below=dict(data.get("at_or_below") or {}),   # type: ignore[call-overload]
                   thresholds=dict(data.get("thresholds") or {}))      # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class Repetition:
    """One repetition of a cell. Give a histogram (base64 HDR, in the input unit) or raw samples
    (time-ordered); `stats` are exact statistics already computed from the samples by name ('mean',
    'p75', ...; in the input unit), preferred to the histogram's; `position` is the repetition's place
    in the run's execution order; `timeline` its time-ordered summary; `step` the step its latencies
    were recorded in (input unit), when known."""

    histogram: str | bytes | None = None
    samples: Sequence[float] | NDArray[np.float64] | None = None
    stats: Mapping[str, float] = field(default_factory=dict)
    position: int | None = None
    timeline: Timeline | None = None
    step: float | None = None


ArmInput = Union[str, bytes, Replicates, Sequence[Repetition], Sequence[float], NDArray[np.float64],
                 Sequence[str], Sequence[Sequence[float]]]
Verdict = Literal["no difference", "small", "medium", "large", "too noisy to tell"]


@dataclass(frozen=True, slots=True)
class AbResult:
    statistic: str                 # "mean" or "p75", "p99.9", ...
    reference: float               # the statistic of each arm (the mean over its repetitions)
    variant: float
    abs_diff: float                # variant - reference
    rel_diff: float                # abs_diff / |reference|; nan when reference == 0
    ci_low: float                  # 95% interval of abs_diff
    ci_high: float
    ci_low_rel: float              # the same interval relative to |reference|
    ci_high_rel: float
    mw_p: float | None             # Mann-Whitney two-sided p over the per-repetition values
    cliffs_delta: float | None     # P(variant > reference) - P(variant < reference)
    verdict: Verdict
    worse: bool | None             # the variant is worse for the metric's direction; None if no verdict
    mde: float                     # smallest |abs_diff| detectable with 80% power at 5%
    mde_rel: float
    n_ref: int                     # repetitions (intervals' samples for one repetition per side)
    n_var: int
    method: str                    # see the module docstring
    p_value: float | None = None   # of the test the interval comes from
    paired: bool = False
    ref_values: tuple[float, ...] = ()   # the statistic of each repetition, in run order
    var_values: tuple[float, ...] = ()
    ref_positions: tuple[int | None, ...] = ()
    var_positions: tuple[int | None, ...] = ()
    block_length: float | None = None    # block-bootstrap-time: mean block length (intervals), max of arms
    effective_n: float | None = None     # block-bootstrap-time: intervals / block length, min of arms


def parse_kind(kind: str) -> tuple[str, float | None]:
    """'mean', 'latency_mean', 'throughput' -> mean; 'p75', 'latency_p999', 99 -> that percentile."""
    match = re.search(r"p(\d+)$", str(kind))
    if match is None:
        return "mean", None
    digits = match.group(1)
    q = float(digits) if len(digits) <= 2 else float(digits[:2] + "." + digits[2:])
    return f"p{q:g}", q


def stat_key(q: float | None) -> str:
    """The name a statistic has in `Repetition.stats` and `Timeline.at_or_below`: 'mean', 'p75', 'p999'."""
    return "mean" if q is None else "p" + f"{q:g}".replace(".", "")


# --- arms -------------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Rep:
    stats: dict[str, float]
    position: int | None
    timeline: Timeline | None
    histogram: str | bytes | None = None
    scale: float = 1.0
    _dist: Distribution | None = None
    step: float | None = None

    @property
    def dist(self) -> Distribution | None:
        """The repetition's distribution, decoded on first use (most comparisons need only `stats`)."""
        if self._dist is None and self.histogram is not None:
            self._dist = from_hdr(self.histogram, self.scale)
        return self._dist


def _rep(r: Repetition, scale: float) -> _Rep:
    dist = None
    timeline = r.timeline
    if r.samples is not None:
        samples = np.asarray(r.samples, dtype=np.float64)
        dist = from_samples(samples * scale)
        if timeline is None:
            timeline = timeline_from_samples(samples)
    stats = {k: float(v) * scale for k, v in r.stats.items() if v is not None and math.isfinite(float(v))}
    if timeline is not None and scale != 1.0:
        timeline = Timeline(counts=timeline.counts, sums=[float(v) * scale for v in timeline.sums],
                            at_or_below=timeline.at_or_below,
                            thresholds={k: float(v) * scale for k, v in timeline.thresholds.items()})
    return _Rep(stats, r.position, timeline, r.histogram if dist is None else None, scale, dist,
                r.step * scale if r.step else None)


def timeline_from_samples(samples: NDArray[np.float64], chunks: int = SAMPLE_CHUNKS) -> Timeline:
    """Time-ordered samples of one repetition summarised in equal-count chunks (thresholds are the
    samples' own nearest-rank percentiles)."""
    arr = np.asarray(samples, dtype=np.float64)
    arr = arr[np.isfinite(arr)]
    parts = np.array_split(arr, min(chunks, max(arr.size, 1)))
    thresholds, at_or_below = {}, {}
    for q in (50.0, 75.0, 90.0, 95.0, 99.0, 99.9):
        thr = float(np.percentile(arr, q, method="inverted_cdf"))
        thresholds[stat_key(q)] = thr
        at_or_below[stat_key(q)] = [int(np.sum(p <= thr)) for p in parts]
    return Timeline(counts=[p.size for p in parts], sums=[float(p.sum()) for p in parts],
                    at_or_below=at_or_below, thresholds=thresholds)


def _arm(data: ArmInput, scale: float) -> list[_Rep] | NDArray[np.float64]:
    """Repetitions, or the scaled values of `Replicates`."""
    if isinstance(data, Replicates):
        vals = np.asarray(data.values, dtype=np.float64) * scale
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            raise ValueError("no replicate values")
        return np.asarray(vals, dtype=np.float64)
    if isinstance(data, (str, bytes)):
        return [_rep(Repetition(histogram=data), scale)]
    if isinstance(data, np.ndarray) and data.ndim == 1:
        return [_rep(Repetition(samples=data), scale)]
    items = list(data)
    if not items:
        raise ValueError("empty input")
    if all(isinstance(i, Repetition) for i in items):
        return [_rep(i, scale) for i in items]
    if all(isinstance(i, (str, bytes)) for i in items):
        return [_rep(Repetition(histogram=i), scale) for i in items]
    if all(np.ndim(i) == 1 for i in items):
        return [_rep(Repetition(samples=np.asarray(i, dtype=np.float64)), scale) for i in items]
    return [_rep(Repetition(samples=np.asarray(items, dtype=np.float64)), scale)]


def _value(rep: _Rep, q: float | None) -> float:
    key = stat_key(q)
    if key in rep.stats:
        return rep.stats[key]
    if rep.dist is None:
        raise ValueError(f"a repetition has neither the statistic '{key}' nor a histogram")
    return rep.dist.mean() if q is None else rep.dist.percentile(q)


def _ordered(reps: list[_Rep]) -> list[_Rep]:
    if all(r.position is not None for r in reps):
        return sorted(reps, key=lambda r: r.position)  # type: ignore[arg-type, return-value]
    return reps


# --- verdicts ---------------------------------------------------------------------------------------

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


@dataclass(slots=True)
class _Estimate:
    reference: float
    variant: float
    lo: float
    hi: float
    mde: float
    p_value: float | None
    method: str
    n_ref: int
    n_var: int
    mw_p: float | None = None
    cliffs_delta: float | None = None
    paired: bool = False
    ref_values: tuple[float, ...] = ()
    var_values: tuple[float, ...] = ()
    ref_positions: tuple[int | None, ...] = ()
    var_positions: tuple[int | None, ...] = ()
    block_length: float | None = None
    effective_n: float | None = None
    too_noisy: bool = False


def compare(reference: ArmInput, variant: ArmInput, *, direction: Direction = "lower", kind: str = "mean",
            scale: float = 1.0, n_boot: int = N_BOOT, seed: int = SEED) -> AbResult:
    """Compare a variant with its reference. `kind` names the statistic ('mean', 'p75', or a metric
    name such as 'latency_p99'); `scale` multiplies the inputs (e.g. 1e-3 turns HDR microseconds
    into milliseconds). Deterministic for a given seed."""
    statistic, q = parse_kind(kind)
    ref, var = _arm(reference, scale), _arm(variant, scale)
    rng = np.random.default_rng(seed)
    if isinstance(ref, np.ndarray) or isinstance(var, np.ndarray):
        if not (isinstance(ref, np.ndarray) and isinstance(var, np.ndarray)):
            raise ValueError("Replicates can only be compared with Replicates")
        est = _by_replicates(ref, var, rng, n_boot)
    elif max(len(ref), len(var)) >= 2:
        est = _by_repetitions(_ordered(ref), _ordered(var), _rounding_var(ref, var, q), q)
    else:
        est = _by_time_blocks(ref[0], var[0], _rounding_var(ref, var, q), q, rng, n_boot)
    return _result(statistic, est, direction)


def _rounding_var(ref: list[_Rep], var: list[_Rep], q: float | None) -> float:
    """What recording in steps adds to the variance of the difference of a percentile: h²/12 per arm,
    h the coarsest step of its repetitions (see the module docstring)."""
    if q is None:
        return 0.0
    return sum(max((r.step or 0.0 for r in arm), default=0.0) ** 2 / 12.0 for arm in (ref, var))


def _result(statistic: str, e: _Estimate, direction: Direction) -> AbResult:
    abs_diff = e.variant - e.reference
    base = abs(e.reference)
    def rel(v: float) -> float:
        return v / base if base else math.nan

    if e.too_noisy or not (math.isfinite(e.lo) and math.isfinite(e.hi)):
        verdict: Verdict = "too noisy to tell"
    else:
        verdict = _verdict(abs_diff, e.lo, e.hi, e.reference)
    worse = None
    if verdict not in ("no difference", "too noisy to tell"):
        worse = abs_diff > 0 if direction == "lower" else abs_diff < 0
    return AbResult(
        statistic=statistic, reference=e.reference, variant=e.variant, abs_diff=abs_diff, rel_diff=rel(abs_diff),
        ci_low=e.lo, ci_high=e.hi, ci_low_rel=rel(e.lo), ci_high_rel=rel(e.hi),
        mw_p=e.mw_p, cliffs_delta=e.cliffs_delta, verdict=verdict, worse=worse,
        mde=e.mde, mde_rel=rel(e.mde), n_ref=e.n_ref, n_var=e.n_var, method=e.method,
        p_value=e.p_value, paired=e.paired, ref_values=e.ref_values, var_values=e.var_values,
        ref_positions=e.ref_positions, var_positions=e.var_positions,
        block_length=e.block_length, effective_n=e.effective_n)


# --- over repetitions -------------------------------------------------------------------------------

def _by_repetitions(ref: list[_Rep], var: list[_Rep], rounding_var: float, q: float | None) -> _Estimate:
    from scipy import stats as sps
    a = np.array([_value(r, q) for r in ref])
    b = np.array([_value(r, q) for r in var])
    paired = (a.size == b.size >= PAIRED_MIN_PAIRS
              and all(r.position is not None for r in ref + var))
    diff = float(b.mean() - a.mean())
    if paired:
        d = b - a
        df = float(a.size - 1)
        se = float(d.std(ddof=1) / math.sqrt(d.size))
        method = "paired-t-repetitions"
    elif a.size == b.size or min(a.size, b.size) == 1:
        df = float(a.size + b.size - 2)
        pooled = ((a.size - 1) * a.var(ddof=1 if a.size > 1 else 0)
                  + (b.size - 1) * b.var(ddof=1 if b.size > 1 else 0)) / df
        se = math.sqrt(pooled * (1 / a.size + 1 / b.size))
        method = "t-repetitions"
    else:
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        se = math.sqrt(va + vb)
        df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if se > 0 else float(a.size + b.size - 2)
        method = "welch-t-repetitions"
    se = math.sqrt(se ** 2 + rounding_var)
    t975 = float(sps.t.ppf(0.975, df))
    half = t975 * se
    p = float(2 * sps.t.sf(abs(diff) / se, df)) if se > 0 else (1.0 if diff == 0 else 0.0)
    mde = (t975 + float(sps.t.ppf(0.80, df))) * se
    mw_p = None
    if a.size >= 2 and b.size >= 2:
        mw_p = float(sps.mannwhitneyu(b, a, alternative="two-sided").pvalue)
    delta = float((np.sign(b[:, None] - a[None, :])).mean())
    return _Estimate(
        reference=float(a.mean()), variant=float(b.mean()), lo=diff - half, hi=diff + half, mde=mde, p_value=p,
        method=method, n_ref=int(a.size), n_var=int(b.size), mw_p=mw_p, cliffs_delta=delta, paired=paired,
        ref_values=tuple(float(x) for x in a), var_values=tuple(float(x) for x in b),
        ref_positions=tuple(r.position for r in ref), var_positions=tuple(r.position for r in var))


def _by_replicates(a: NDArray[np.float64], b: NDArray[np.float64], rng: np.random.Generator,
                   n_boot: int) -> _Estimate:
    from scipy import stats as sps
    diffs = _boot_mean(b, rng, n_boot) - _boot_mean(a, rng, n_boot)
    alpha = _expanded_alpha(min(a.size, b.size))
    lo, hi = (float(v) for v in np.quantile(diffs, [alpha / 2, 1 - alpha / 2]))
    sd = float(np.std(diffs, ddof=1))
    diff = float(b.mean() - a.mean())
    p = float(2 * sps.norm.sf(abs(diff) / sd)) if sd > 0 else None
    mw_p = delta = None
    if min(a.size, b.size) >= 2:
        mw_p = float(sps.mannwhitneyu(b, a, alternative="two-sided").pvalue)
        delta = float((np.sign(b[:, None] - a[None, :])).mean())
    return _Estimate(reference=float(a.mean()), variant=float(b.mean()), lo=lo, hi=hi,
                     mde=(_Z975 + _Z80) * sd, p_value=p, method="bootstrap-replicates",
                     n_ref=int(a.size), n_var=int(b.size), mw_p=mw_p, cliffs_delta=delta,
                     ref_values=tuple(float(x) for x in a), var_values=tuple(float(x) for x in b))


def _boot_mean(vals: NDArray[np.float64], rng: np.random.Generator, b: int) -> NDArray[np.float64]:
    idx = rng.integers(0, vals.size, size=(b, vals.size))
    return np.asarray(vals[idx].mean(axis=1), dtype=np.float64)


def _expanded_alpha(n: int, alpha: float = 0.05) -> float:
    """Hesterberg (2015): use the normal tail level whose z equals sqrt(n/(n-1)) * t_{n-1}."""
    from scipy import stats as sps
    if n < 2:
        return alpha
    z = math.sqrt(n / (n - 1)) * float(sps.t.ppf(1 - alpha / 2, n - 1))
    return float(2 * sps.norm.sf(z))


# --- one repetition per side: block bootstrap over time ---------------------------------------------

@dataclass(slots=True)
class _TimeBoot:
    point: float
    draws: NDArray[np.float64] | None     # None: not enough intervals
    block_length: float | None
    effective_n: float | None
    intervals: int


def _quantile_of(dist: Distribution, u: NDArray[np.float64]) -> NDArray[np.float64]:
    """The distribution's nearest-rank quantile at each level u in [0, 1]."""
    cum = np.cumsum(dist.counts)
    rank = np.clip(np.ceil(u * dist.n - 1e-9), 1, dist.n)
    return np.asarray(dist.values[np.minimum(np.searchsorted(cum, rank), dist.values.size - 1)], dtype=np.float64)


def stationary_block_sums(columns: NDArray[np.float64], block: float, n_boot: int,
                          rng: np.random.Generator) -> NDArray[np.float64]:
    """Politis and Romano's stationary bootstrap over the `t` time-ordered points of `columns` (shape
    (c, t)): `n_boot` resamples of `t` points, and each column's sum over each resample (shape
    (n_boot, c)). Every point starts a new block with probability 1/`block` (the first always), at a
    uniform position, and a block runs on circularly: the scheme of `arch.bootstrap.StationaryBootstrap`
    (a test compares the two), drawn for all resamples at once (arch draws one per Python call)."""
    cols = np.atleast_2d(np.asarray(columns, dtype=np.float64))
    t = cols.shape[1]
    new = rng.random((n_boot, t), dtype=np.float32) < np.float32(1.0 / block)
    new[:, 0] = True
    if block < 4:
        # Short blocks: index every point (int32 halves the memory traffic).
        pos = np.arange(t, dtype=np.int32)
        starts = rng.integers(0, t, size=(n_boot, t), dtype=np.int32)
        first = np.maximum.accumulate(np.where(new, pos, np.int32(0)), axis=1)
        idx = np.take_along_axis(starts, first, axis=1) + (pos - first)
        idx[idx >= t] -= t
        return np.stack([c[idx].sum(axis=1) for c in cols], axis=1)
    # Longer blocks: each block's sum from prefix sums of the columns twice over (blocks wrap around).
    prefix = np.zeros((cols.shape[0], 2 * t + 1))
    np.cumsum(np.concatenate([cols, cols], axis=1), axis=1, out=prefix[:, 1:])
    at = np.flatnonzero(new)                           # where blocks begin, resample by resample
    lengths = np.diff(at, append=n_boot * t)           # a block ends where the next one begins
    begins = rng.integers(0, t, size=at.size)
    per_block = prefix[:, begins + lengths] - prefix[:, begins]
    row = at // t
    return np.stack([np.bincount(row, weights=sums, minlength=n_boot) for sums in per_block], axis=1)


def _time_boot(rep: _Rep, q: float | None, rng: np.random.Generator, n_boot: int) -> _TimeBoot:
    # arch's own estimator behind `arch.bootstrap.optimal_block_length`, without its pandas DataFrame (which
    # costs more than the estimate on 200 points); imported on first use: arch takes seconds to load.
    from arch.bootstrap.base import _single_optimal_block

    point = _value(rep, q)
    tl = rep.timeline
    if tl is None:
        return _TimeBoot(point, None, None, None, 0)
    n = np.asarray(tl.counts, dtype=np.float64)
    keep = n > 0
    n = n[keep]
    if q is None:
        s = np.asarray(tl.sums, dtype=np.float64)[keep]
        series = s / n
    else:
        key = stat_key(q)
        if key not in tl.at_or_below or rep.dist is None:
            return _TimeBoot(point, None, None, None, int(n.size))
        k = np.asarray(tl.at_or_below[key], dtype=np.float64)[keep]
        series = k / n
    if n.size < MIN_INTERVALS:
        return _TimeBoot(point, None, None, None, int(n.size))
    if np.ptp(series) == 0:
        block = 1.0
    else:
        block = max(float(_single_optimal_block(np.asarray(series, dtype=np.float64))[0]), 1.0)
    sums = stationary_block_sums(np.vstack([n, s if q is None else k]), block, n_boot, rng)
    n_star = sums[:, 0]
    if q is None:
        draws = sums[:, 1] / n_star
        # centred on the exact point (the timeline's sum and the exact mean agree to rounding)
        draws = draws - s.sum() / n.sum() + point
    else:
        assert rep.dist is not None
        p0 = k.sum() / n.sum()
        f_star = sums[:, 1] / n_star
        draws = _quantile_of(rep.dist, np.clip(q / 100.0 - (f_star - p0), 0.0, 1.0))
        draws = draws - float(_quantile_of(rep.dist, np.array([q / 100.0]))[0]) + point
    return _TimeBoot(point, np.asarray(draws, dtype=np.float64), block, n.size / block, int(n.size))


def _by_time_blocks(ref: _Rep, var: _Rep, rounding_var: float, q: float | None, rng: np.random.Generator,
                    n_boot: int) -> _Estimate:
    from scipy import stats as sps
    a = _time_boot(ref, q, rng, n_boot)
    b = _time_boot(var, q, rng, n_boot)
    delta = None
    if ref.dist is not None and var.dist is not None:
        delta, _ = cliffs_delta_and_u(ref.dist, var.dist)
    common = dict(reference=a.point, variant=b.point, n_ref=a.intervals, n_var=b.intervals, cliffs_delta=delta,
                  ref_values=(a.point,), var_values=(b.point,), ref_positions=(ref.position,),
                  var_positions=(var.position,))
    if a.draws is None or b.draws is None:
        method = "no-time-order" if (ref.timeline is None or var.timeline is None) else "block-bootstrap-time"
        return _Estimate(lo=math.nan, hi=math.nan, mde=math.nan, p_value=None, method=method, too_noisy=True,
                         **common)  # type: ignore[arg-type]
    diffs = b.draws - a.draws
    lo, hi = (float(v) for v in np.quantile(diffs, [0.025, 0.975]))
    diff = b.point - a.point
    sd = math.sqrt(float(np.var(diffs, ddof=1)) + rounding_var)
    if rounding_var:   # each side of the bootstrap interval moved out by the rounding, added in quadrature
        widen = _Z975 ** 2 * rounding_var
        lo -= math.sqrt((diff - lo) ** 2 + widen) - abs(diff - lo)
        hi += math.sqrt((hi - diff) ** 2 + widen) - abs(hi - diff)
    p = float(2 * sps.norm.sf(abs(diff) / sd)) if sd > 0 else (1.0 if diff == 0 else 0.0)
    eff = min(a.effective_n or 0.0, b.effective_n or 0.0)
    return _Estimate(lo=lo, hi=hi, mde=(_Z975 + _Z80) * sd, p_value=p, method="block-bootstrap-time",
                     block_length=max(a.block_length or 1.0, b.block_length or 1.0), effective_n=eff,
                     too_noisy=eff < MIN_EFFECTIVE_N, **common)  # type: ignore[arg-type]

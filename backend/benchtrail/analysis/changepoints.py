"""Change-point detection on a trail (or an overhead trail), ordered by version.

Built on apache-otava's windowed E-divisive split (Fleming et al., "Hunter", ICPE 2023), which proposes
candidate change points quickly. Otava's own merge step accepts far too many of them on real trails
(about 15 per series on TCPD against about 2 true ones), so the merge here is ours:

- the significance threshold shrinks with the trail's length, because a longer trail is scanned at more
  places and would otherwise collect false alarms in proportion to its length;
- each candidate is judged between its accepted neighbours and between its nearest other candidates
  (those within `neighbour_gap` points left out), whichever passes: judged on the whole trail, a
  regression and its fix a few runs later dilute each other and both are lost;
- a change must also be large against the trail's own noise (robust, from first differences, so steps
  and slow drifts do not inflate it, corrected for lag-1 autocorrelation) and, optionally, in percent;
- autocorrelated noise makes segment means vary more than independent points would: a second pass
  inflates the t-test's variance by (1 + rho) / (1 - rho), rho from the residuals around the first
  pass's segments (robust Gnanadesikan-Kettenring form), capped at `max_autocorrelation`;
- candidates come from otava and from MOSUM statistics at a few bandwidths (short ones see a
  regression and its fix a few runs apart); when no single candidate passes, the two edges of a
  bump are tested together (inside against outside) and accepted as a pair, then re-judged one by one;
- a segment's variance in the tests is floored at the trail's robust noise, so a short stretch of
  points that happen to agree (skewed noise, the end of a trail) is not mistaken for a new level;
- single outliers are neutralised (Hampel filter) before anything is measured, and a segment needs a
  few points, so one bad run is not a change point;
- when the raw replicates of every version are given, a change must also be significant between the
  replicates next to it (Mann-Whitney), which catches changes the per-version means hide and rejects
  ones that one noisy version produced;
- known change points (annotations: release, JDK bump, infra change) are fixed boundaries, so they
  neither raise alerts nor mask a neighbouring change;
- `detect_incremental` re-analyses only the tail when new versions arrive.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

# scipy and otava (which imports scipy.stats) are imported in the functions that use them: see analysis/ab.py.

from benchtrail.analysis.direction import Direction

_MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True, slots=True)
class Settings:
    """Detector settings. The defaults are the one global setting evaluated by `make bench-detect`.

    p_value: significance for a trail of `reference_length` points; longer trails use a proportionally
      stricter threshold (Bonferroni over the trail's length), shorter ones the same.
    min_effect_sigma: smallest mean shift, in units of the trail's noise, that is reported.
    min_magnitude_pct: smallest mean shift in percent of the level before it (0 = no limit).
    window: otava's sliding window for proposing candidates.
    direction: which way is better for the metric; decides regression vs improvement.
    neighbour_gap: candidates closer than this to the one judged are not boundaries of its window.
    max_autocorrelation: cap on the lag-1 autocorrelation the noise estimates and the t-test correct
      for (0 = treat noise as independent); long real trails are far more autocorrelated than their
      noise alone, and an uncapped correction would hide their changes.
    mosum_bandwidths, mosum_threshold: MOSUM proposals added to otava's (`mosum_candidates`).
    variance_floor: each segment's variance in the t-tests is at least this share of the trail's noise
      variance (a few points that happen to lie close together are no evidence of a quiet segment).
    max_bump, bump_candidate_p, max_bumps: when no single candidate passes, the most significant
      bump (two candidates at most `max_bump` apart, each with p <= `bump_candidate_p` on its own)
      may be accepted as a pair (`bump_p`), at most `max_bumps` times per analysis.
    """

    min_magnitude_pct: float = 0.0
    min_effect_sigma: float = 1.0
    p_value: float = 1e-4
    window: int = 50
    direction: Direction = "lower"
    min_segment: int = 3
    reference_length: int = 100
    outlier_k: float = 5.0
    first_pass_p: float = 0.05
    local: int = 10
    min_contrast: float = 2.5
    neighbour_gap: int = 5
    max_autocorrelation: float = 0.35
    mosum_bandwidths: tuple[int, ...] = (5, 10, 20)
    mosum_threshold: float = 2.5
    variance_floor: float = 0.6
    max_bump: int = 50
    bump_candidate_p: float = 0.01
    max_bumps: int = 10


@dataclass(frozen=True, slots=True)
class ChangePoint:
    index: int                  # first index of the new level (position in the trail as given)
    p_value: float              # Welch t-test between the neighbouring segments, as if independent
    magnitude_abs: float        # after_mean - before_mean
    magnitude_rel: float        # magnitude_abs / |before_mean|; nan when before_mean == 0
    direction: str              # 'regression' | 'improvement' | 'known'
    before_mean: float
    after_mean: float
    effect_sigma: float = 0.0   # |magnitude_abs| / trail noise
    known: bool = False         # matches an annotation; reported, never alerted on
    p_value_adjusted: float = math.nan  # what decided: p_value with the noise's autocorrelation
    autocorrelation: float = 0.0        # lag-1 autocorrelation of the noise allowed for (capped)


@dataclass(frozen=True, slots=True)
class DetectionResult:
    """What `detect_incremental` needs from the previous analysis of the same trail."""

    change_points: list[ChangePoint]
    n: int


# ---------------------------------------------------------------------------------------------------
# robust helpers


def lag1_autocorrelation(values: NDArray[np.float64]) -> float:
    """Lag-1 autocorrelation of a trail's noise, from its lag-1 and lag-2 differences.

    For stationary noise with autocorrelation rho(k), Var(x[t] - x[t-k]) = 2 sigma^2 (1 - rho(k)); for
    AR(1) noise rho(2) = rho^2, so Var(d2) / Var(d1) = 1 + rho. Each difference is centred on its
    median (a drift shifts all of them equally) and its variance is a 10% trimmed mean of squares
    (scipy.stats.trim_mean), so a step (one large lag-1 and two large lag-2 differences) and the odd
    outlier do not move the estimate the way they move a plain autocorrelation. Clipped to [-0.9, 0.9].
    """
    from scipy import stats as sps
    if values.size < 8:
        return 0.0
    d1 = np.diff(values)
    d2 = values[2:] - values[:-2]
    v1 = float(sps.trim_mean((d1 - np.median(d1)) ** 2, 0.1))
    v2 = float(sps.trim_mean((d2 - np.median(d2)) ** 2, 0.1))
    if v1 <= 0.0:
        return 0.0
    return float(np.clip(v2 / v1 - 1.0, -0.9, 0.9))


def residual_autocorrelation(values: NDArray[np.float64], cuts: Sequence[int]) -> float:
    """Lag-1 autocorrelation of the residuals around the segment means between `cuts`.

    Gnanadesikan-Kettenring form, rho = (V(u) - V(v)) / (V(u) + V(v)) with u = r[t] + r[t-1] and
    v = r[t] - r[t-1] over pairs inside one segment, V a 10% trimmed mean of squares
    (scipy.stats.trim_mean), so the odd outlier does not decide it. Removing each segment's mean
    biases the estimate down by about one over the segment's length; that is added back."""
    from scipy import stats as sps
    n = values.size
    bounds = [0, *sorted(c for c in set(cuts) if 0 < c < n), n]
    u: list[NDArray[np.float64]] = []
    v: list[NDArray[np.float64]] = []
    bias = 0.0
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi - lo < 3:
            continue
        r = values[lo:hi] - float(np.mean(values[lo:hi]))
        u.append(r[1:] + r[:-1])
        v.append(r[1:] - r[:-1])
        bias += (hi - lo - 1) / (hi - lo)
    pairs = sum(a.size for a in u)
    if pairs < 8:
        return 0.0
    vu = float(sps.trim_mean(np.concatenate(u) ** 2, 0.1))
    vv = float(sps.trim_mean(np.concatenate(v) ** 2, 0.1))
    if vu + vv <= 0:
        return 0.0
    return float(np.clip((vu - vv) / (vu + vv) + bias / pairs, -0.9, 0.9))


def _diff_sigma(values: NDArray[np.float64]) -> float:
    from scipy import stats as sps
    if values.size < 3:
        return float(np.std(values)) if values.size > 1 else 0.0
    d = np.diff(values)
    sigma = float(sps.median_abs_deviation(d, scale="normal")) / math.sqrt(2.0)
    if sigma == 0.0:
        # quantised trails (integers, identical runs) have MAD 0; fall back to the mean difference
        # (E|d| = 2*sigma/sqrt(pi) for normal noise).
        sigma = float(np.mean(np.abs(d))) * math.sqrt(math.pi) / 2.0
    return sigma


def noise_sigma(values: NDArray[np.float64], rho: float | None = None) -> float:
    """Noise of a trail (its standard deviation around the level) from its first differences: a step
    moves one difference, a drift shifts all of them equally, so neither inflates the estimate the way
    a plain standard deviation would. The MAD of the differences (scipy.stats.median_abs_deviation)
    gives sigma * sqrt(2 (1 - rho)); positively autocorrelated noise would shrink it, so it is divided
    by sqrt(1 - rho) with rho the noise's lag-1 autocorrelation (`lag1_autocorrelation`, clipped at 0)."""
    sigma = _diff_sigma(values)
    if rho is None:
        rho = lag1_autocorrelation(values)
    return sigma / math.sqrt(1.0 - min(max(rho, 0.0), 0.9))


def hampel(values: NDArray[np.float64], half_window: int = 3, k: float = 5.0) -> NDArray[np.float64]:
    """Replace isolated outliers by the local median. A level shift keeps the local median on its
    side, so only points unlike both neighbourhoods are touched."""
    n = values.size
    if n < 2 * half_window + 1 or k <= 0:
        return values.copy()
    # Mirrored ends, so two outliers among the last points cannot become the local median.
    padded = np.pad(values, half_window, mode="reflect")
    windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * half_window + 1)
    med = np.median(windows, axis=1)
    mad = np.median(np.abs(windows - med[:, None]), axis=1) * _MAD_TO_SIGMA
    floor = _diff_sigma(values)
    scale = np.maximum(mad, floor)
    out = values.copy()
    bad = np.abs(values - med) > k * scale
    out[bad] = med[bad]
    return out


# ---------------------------------------------------------------------------------------------------
# detection


@dataclass(slots=True)
class _Candidate:
    index: int
    p: float = 1.0
    before: float = 0.0
    after: float = 0.0
    ok: bool = False
    score: float = 0.0
    effect: float = 0.0


def _threshold(settings: Settings, n: int) -> float:
    return settings.p_value * min(1.0, settings.reference_length / max(n, 1))


def _replicate_p(replicates: Sequence[Sequence[float]] | None, left: slice, right: slice) -> float | None:
    from scipy import stats as sps
    if replicates is None:
        return None
    a = [v for r in replicates[left] for v in r]
    b = [v for r in replicates[right] for v in r]
    if len(a) < 3 or len(b) < 3:
        return None
    return float(sps.mannwhitneyu(a, b, alternative="two-sided").pvalue)


def local_contrast(x: NDArray[np.float64], cp: int, lo: int, hi: int, m: int, sigma: float,
                   prefix: NDArray[np.float64] | None = None) -> float:
    """How unusual the shift at `cp` is for its own segment: the difference of the `m`-point means
    after and before `cp`, over the RMS of the same difference at the segment's other positions.
    A ramp or a wandering trail shows similar differences everywhere (ratio near 1); a step in flat
    noise stands out by its size over the noise of an m-point mean."""
    m = min(m, cp - lo, hi - cp)
    if m < 1:
        return 0.0
    # `prefix`, when given, holds the prefix sums of x (or of x minus a constant, which differences of
    # means ignore), so a long segment is not summed again for every candidate.
    csum = np.concatenate([[0.0], np.cumsum(x[lo:hi])]) if prefix is None else prefix[lo:hi + 1] - prefix[lo]
    size = hi - lo
    t = np.arange(m, size - m + 1)
    d = (csum[t + m] - csum[t]) / m - (csum[t] - csum[t - m]) / m
    at = cp - lo
    here = float((csum[at + m] - csum[at]) / m - (csum[at] - csum[at - m]) / m)
    others = d[np.abs(t - at) >= m]
    floor = sigma * math.sqrt(2.0 / m)
    scale = max(float(np.sqrt(np.mean(others ** 2))) if others.size else 0.0, floor)
    return abs(here) / scale if scale > 0 else (math.inf if here != 0 else 0.0)


class _Sums:
    """Prefix sums for O(1) segment means and variances (centred to avoid cancellation)."""

    def __init__(self, x: NDArray[np.float64]) -> None:
        self.values = x
        self.shift = float(np.median(x)) if x.size else 0.0
        z = x - self.shift
        self.s1 = np.concatenate([[0.0], np.cumsum(z)])
        self.s2 = np.concatenate([[0.0], np.cumsum(z * z)])

    def mean_var(self, lo: int, hi: int) -> tuple[float, float]:
        n = hi - lo
        s1 = self.s1[hi] - self.s1[lo]
        mean = s1 / n
        var = max((self.s2[hi] - self.s2[lo]) - s1 * mean, 0.0) / (n - 1) if n > 1 else 0.0
        return float(mean + self.shift), float(var)


def welch_p(m1: float, v1: float, n1: int, m2: float, v2: float, n2: int, inflation: float = 1.0) -> float:
    """Two-sided Welch t-test p-value from segment statistics (scipy.stats.ttest_ind, equal_var=False).

    `inflation` is the variance inflation of a mean of autocorrelated noise, (1 + rho) / (1 - rho) for
    AR(1): each segment's mean varies that much more than for independent points, and it holds the
    information of n / inflation independent points (used for the degrees of freedom)."""
    from scipy import special
    if n1 < 2 or n2 < 2:
        return 1.0
    f = max(inflation, 1.0)
    a, b = f * v1 / n1, f * v2 / n2
    se2 = a + b
    if se2 <= 0:
        return 0.0 if m1 != m2 else 1.0
    t = (m2 - m1) / math.sqrt(se2)
    e1, e2 = max(n1 / f, 2.0), max(n2 / f, 2.0)
    df = se2 * se2 / (a * a / (e1 - 1) + b * b / (e2 - 1))
    return float(2.0 * special.stdtr(df, -abs(t)))


@dataclass(frozen=True, slots=True)
class _Noise:
    sigma: float
    inflation: float


def _noise(diff_sigma: float, rho_sigma: float, rho_test: float) -> _Noise:
    sigma = diff_sigma / math.sqrt(1.0 - min(max(rho_sigma, 0.0), 0.9))
    r = min(max(rho_test, 0.0), 0.9)
    return _Noise(sigma, (1.0 + r) / (1.0 - r))


def _evaluate(c: _Candidate, windows: Sequence[tuple[int, int]], x: NDArray[np.float64], noise: _Noise,
              settings: Settings, p_max: float, replicates: Sequence[Sequence[float]] | None,
              sums: _Sums) -> None:
    """Judge the candidate on each of its windows (between its accepted neighbours, and between its
    nearest other candidates). It passes when one window passes every criterion with its p-value
    multiplied by the number of windows tried (Bonferroni); the most significant passing window (or,
    when none passes, the most significant one) is what is reported."""
    unique = list(dict.fromkeys(windows))
    best: tuple[bool, float, float, float, float, float] | None = None
    for lo, hi in unique:
        n1, n2 = c.index - lo, hi - c.index
        m1, v1 = sums.mean_var(lo, c.index)
        m2, v2 = sums.mean_var(c.index, hi)
        # A few points that happen to lie close together are no evidence of a quieter segment: each
        # segment's variance is at least the trail's robust noise (`variance_floor` of it).
        floor = settings.variance_floor * noise.sigma ** 2
        p = welch_p(m1, max(v1, floor), n1, m2, max(v2, floor), n2, noise.inflation)
        rp = _replicate_p(replicates, slice(lo, c.index), slice(c.index, hi))
        if rp is not None:
            p = max(p, rp)
        p = min(1.0, p * len(unique))
        diff = abs(m2 - m1)
        effect = diff / noise.sigma if noise.sigma > 0 else (math.inf if diff > 0 else 0.0)
        rel = diff / abs(m1) if m1 != 0 else math.inf
        long_enough = n1 >= settings.min_segment and n2 >= settings.min_segment
        ok = (p <= p_max and long_enough and effect >= settings.min_effect_sigma
              and rel * 100.0 >= settings.min_magnitude_pct
              and local_contrast(x, c.index, lo, hi, settings.local, noise.sigma, sums.s1) >= settings.min_contrast)
        # Among failing candidates drop the least convincing first: shortest evidence, then size.
        score = (0.0 if not long_enough else 10.0) + min(effect, 9.0) - p
        key = (ok, -p, effect, m1, m2, score)
        if best is None or key[:2] > best[:2]:
            best = key
    assert best is not None
    c.ok, c.p, c.effect, c.before, c.after, c.score = best[0], -best[1], best[2], best[3], best[4], best[5]


def _refine(index: int, lo: int, hi: int, reach: int, min_segment: int, sums: _Sums) -> int:
    """The split of [lo, hi) within `reach` of `index` that best separates two means (the
    least-squares / CUSUM location of a single change): E-divisive places a step in noise a point or
    three off, and the misplaced points would look like autocorrelated noise."""
    best, best_stat = index, -1.0
    for t in range(max(lo + min_segment, index - reach), min(hi - min_segment, index + reach) + 1):
        m1, _ = sums.mean_var(lo, t)
        m2, _ = sums.mean_var(t, hi)
        stat = abs(m2 - m1) * math.sqrt((t - lo) * (hi - t) / (hi - lo))
        if stat > best_stat + 1e-12:
            best, best_stat = t, stat
    return best


def bump_p(sums: _Sums, lo: int, i: int, j: int, hi: int, inflation: float = 1.0,
           variance_floor: float = 0.0) -> tuple[float, float]:
    """Welch p-value (and mean difference) of the "epidemic" alternative: the level inside [i, j)
    against the level of [lo, i) and [j, hi) together, as one sample. A regression and its fix make
    such a bump; judged one at a time on the whole window, neither of its two edges stands out."""
    m_in, v_in = sums.mean_var(i, j)
    m_all, v_all = sums.mean_var(lo, hi)
    n_in, n_all = j - i, hi - lo
    n_out = n_all - n_in
    if n_out < 2:
        return 1.0, 0.0
    # Outside = everything minus inside: its sums follow from the two segments' sums.
    s_all, s_in = m_all * n_all, m_in * n_in
    m_out = (s_all - s_in) / n_out
    ss_all = v_all * (n_all - 1) + n_all * m_all * m_all
    ss_in = v_in * (n_in - 1) + n_in * m_in * m_in
    v_out = max(ss_all - ss_in - n_out * m_out * m_out, 0.0) / (n_out - 1)
    p = welch_p(m_out, max(v_out, variance_floor), n_out, m_in, max(v_in, variance_floor), n_in, inflation)
    return p, m_in - m_out


def _best_bump(pool: list[int], accepted: list[int], n: int, noise: _Noise, settings: Settings,
               p_max: float, sums: _Sums) -> tuple[int, int] | None:
    """The most significant bump (two candidates i < j in one accepted segment, see `bump_p`) that
    passes with its p-value multiplied by the number of pairs tried (Bonferroni) and is at least
    `min_effect_sigma` high; None when there is none. Pairs further apart than `max_bump` are not tried."""
    floor = settings.variance_floor * noise.sigma ** 2
    tried: list[tuple[float, int, int, float]] = []
    for a, i in enumerate(pool):
        lo, hi = _bounds(i, accepted, n)
        for j in pool[a + 1:]:
            if j - i > settings.max_bump or j >= hi:
                break
            if j - i < settings.min_segment or i - lo < settings.min_segment or hi - j < settings.min_segment:
                continue
            p, diff = bump_p(sums, lo, i, j, hi, noise.inflation, floor)
            tried.append((p, i, j, diff))
    if not tried:
        return None
    p, i, j, diff = min(tried)
    effect = abs(diff) / noise.sigma if noise.sigma > 0 else math.inf
    if p * len(tried) > p_max or effect < settings.min_effect_sigma:
        return None
    # Each edge must stand out in its own part of the bump, as a single change must (a curve or a
    # ramp is no bump).
    lo, hi = _bounds(i, accepted, n)
    x = sums.values
    if (local_contrast(x, i, lo, j, settings.local, noise.sigma, sums.s1) < settings.min_contrast
            or local_contrast(x, j, i, hi, settings.local, noise.sigma, sums.s1) < settings.min_contrast):
        return None
    return i, j


def _bounds(index: int, among: list[int], n: int, gap: int = 0) -> tuple[int, int]:
    """The nearest points of `among` left and right of `index` (0 and n at the ends), skipping those
    closer than `gap`: a candidate a few points away is the same change seen twice, not a boundary."""
    pos = bisect.bisect_left(among, index - gap + 1) if gap > 0 else bisect.bisect_left(among, index)
    lo = among[pos - 1] if pos > 0 else 0
    pos = bisect.bisect_left(among, index + max(gap, 1))
    hi = among[pos] if pos < len(among) else n
    return lo, hi


def _merge(cands: list[_Candidate], fixed: set[int], x: NDArray[np.float64], noise: _Noise,
           settings: Settings, replicates: Sequence[Sequence[float]] | None,
           n_total: int | None = None) -> list[_Candidate]:
    """Forward selection, then backward elimination, over the candidate positions.

    Otava merges bottom-up from all candidates, so a true change flanked by spurious candidates a
    couple of points away is judged on tiny segments and lost. Judged on the whole trail instead, a
    change followed soon by another one (a regression and its fix) is lost too: the other change
    inflates the variance and dilutes the contrast. So each candidate is judged both between its
    already accepted neighbours and between its nearest other candidates at least `gap` points away
    (`Settings.neighbour_gap`), whichever is more significant (Bonferroni over the two). The strongest
    passing candidate is accepted first; then every accepted point is re-checked between its final
    accepted neighbours until all pass."""
    p_max = _threshold(settings, n_total or x.size)
    sums = _Sums(x)
    n = x.size
    gap = max(settings.neighbour_gap, settings.min_segment)
    accepted = sorted(fixed)
    pool = {c.index: c for c in cands if c.index not in fixed}
    everyone = sorted(set(pool) | set(accepted))

    def windows(index: int) -> list[tuple[int, int]]:
        wa = _bounds(index, accepted, n)
        lo, hi = _bounds(index, everyone, n, gap)
        return [wa, (max(lo, wa[0]), min(hi, wa[1]))]

    for c in pool.values():
        _evaluate(c, windows(c.index), x, noise, settings, p_max, replicates, sums)
    bumps_left = settings.max_bumps
    while pool:
        passing = [c for c in pool.values() if c.ok]
        if passing:
            chosen_now = [min(passing, key=lambda c: (c.p, -c.effect)).index]
        elif bumps_left <= 0:
            break
        else:
            bumps_left -= 1
            # Only candidates with some evidence of their own pair up (a bump's edges each show it).
            hopeful = sorted(i for i, c in pool.items() if c.p <= settings.bump_candidate_p)
            pair = _best_bump(hopeful, accepted, n, noise, settings, p_max, sums)
            if pair is None:
                break
            chosen_now = list(pair)
        lo, hi = _bounds(chosen_now[0], accepted, n)
        for i in chosen_now:
            del pool[i]
            bisect.insort(accepted, i)
        for c in pool.values():
            if lo < c.index < hi:
                _evaluate(c, windows(c.index), x, noise, settings, p_max, replicates, sums)

    # Place each accepted change where it best separates its neighbours' segments.
    for _ in range(2):
        moved = False
        for k, i in enumerate(accepted):
            if i in fixed:
                continue
            lo = accepted[k - 1] if k > 0 else 0
            hi = accepted[k + 1] if k + 1 < len(accepted) else n
            j = _refine(i, lo, hi, gap, settings.min_segment, sums)
            if j != i and j not in accepted:
                accepted[k] = j
                moved = True
        if not moved:
            break

    chosen = {i: _Candidate(i) for i in accepted}
    while True:
        order = sorted(chosen)
        for i in order:
            _evaluate(chosen[i], [_bounds(i, order, n)], x, noise, settings, p_max, replicates, sums)
        failing = [chosen[i] for i in order if not chosen[i].ok and i not in fixed]
        if not failing:
            return [chosen[i] for i in order]
        del chosen[min(failing, key=lambda c: c.score).index]


def mosum_statistic(x: NDArray[np.float64], bandwidth: int, sigma: float) -> NDArray[np.float64]:
    """Moving-sum (MOSUM) statistic: at each split t with `bandwidth` points either side, the difference
    of the two means in units of its standard error, |mean(x[t:t+G]) - mean(x[t-G:t])| / (sigma sqrt(2/G)).
    Positions without G points on both sides are 0. Eichinger & Kirch, "A MOSUM procedure for the
    estimation of multiple random change points", Bernoulli 24(1), 2018."""
    n, g = x.size, bandwidth
    out = np.zeros(n, dtype=np.float64)
    if g < 1 or n < 2 * g or sigma <= 0:
        return out
    csum = np.concatenate([[0.0], np.cumsum(x)])
    t = np.arange(g, n - g + 1)
    diff = (csum[t + g] - csum[t]) - (csum[t] - csum[t - g])
    out[g:n - g + 1] = np.abs(diff) / g / (sigma * math.sqrt(2.0 / g))
    return out


def mosum_candidates(x: NDArray[np.float64], bandwidths: Sequence[int], threshold: float,
                     min_segment: int) -> list[int]:
    """Candidate change points from MOSUM statistics at several bandwidths: each position where the
    statistic exceeds `threshold` and is the largest within its bandwidth either side. A short
    bandwidth sees two changes a few points apart (a regression and its fix) that a whole-trail split
    blurs; a long one sees small shifts. These are proposals only: the merge judges them."""
    sigma = _diff_sigma(x)
    found: set[int] = set()
    for g in bandwidths:
        g = min(int(g), x.size // 4)
        if g < min_segment:
            continue
        stat = mosum_statistic(x, g, sigma)
        for t in np.flatnonzero(stat > threshold):
            lo, hi = max(0, t - g), min(x.size, t + g + 1)
            if t == lo + int(np.argmax(stat[lo:hi])):  # the first of tied maxima (a ramp ties)
                found.add(int(t))
    return sorted(found)


def _candidates(x: NDArray[np.float64], settings: Settings, start: int = 0) -> list[int]:
    from otava.analysis import split as otava_split
    if x.size - start < 2 * settings.min_segment:
        return []
    window = max(4, settings.window)
    # A list, not an array: otava's detector slices its window only out of non-ndarray input.
    found = {cp.index + start for cp in otava_split(x[start:].tolist(), window_len=window,
                                                    max_pvalue=settings.first_pass_p)}
    found |= {i + start for i in mosum_candidates(x[start:], settings.mosum_bandwidths, settings.mosum_threshold,
                                                  settings.min_segment)}
    return sorted(found)


def _classify(c: _Candidate, sigma: float, settings: Settings, known: bool, p_plain: float = math.nan,
              rho: float = 0.0) -> ChangePoint:
    diff = c.after - c.before
    worse = diff > 0 if settings.direction == "lower" else diff < 0
    return ChangePoint(
        index=c.index,
        p_value=c.p if math.isnan(p_plain) else p_plain,
        p_value_adjusted=c.p,
        autocorrelation=rho,
        magnitude_abs=diff,
        magnitude_rel=diff / abs(c.before) if c.before != 0 else math.nan,
        direction="known" if known else ("regression" if worse else "improvement"),
        before_mean=c.before,
        after_mean=c.after,
        effect_sigma=abs(diff) / sigma if sigma > 0 else math.inf,
        known=known,
    )


def _prepare(values: Sequence[float] | NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Finite values and their positions in the caller's trail (missing or invalid runs are NaN)."""
    arr = np.asarray(values, dtype=np.float64)
    keep = np.flatnonzero(np.isfinite(arr))
    return arr[keep], keep


def _run(values: Sequence[float] | NDArray[np.float64], replicates: Sequence[Sequence[float]] | None,
         settings: Settings, known: Sequence[int], previous: DetectionResult | None,
         new_count: int) -> DetectionResult:
    raw, pos = _prepare(values)
    reps = [replicates[i] for i in pos] if replicates is not None else None
    n = raw.size
    if n == 0:
        return DetectionResult([], len(values))
    to_clean = {int(p): i for i, p in enumerate(pos)}

    x = hampel(raw, 3, settings.outlier_k)
    diff_sigma = _diff_sigma(x)
    fixed = {to_clean[k] for k in known if k in to_clean and 0 < to_clean[k] < n}

    start = 0
    kept: list[ChangePoint] = []
    if previous is not None and 0 <= new_count and previous.n + new_count == len(values):
        # Only the tail can change: keep the change points well before it, rescan from the last of
        # them (or a window before the cut) with the new points.
        cut = n - (new_count + 2 * settings.window)
        if cut > settings.window:
            kept = [c for c in previous.change_points if c.index in to_clean and to_clean[c.index] < cut]
            start = max(to_clean[kept[-1].index] if kept else 0, cut - settings.window)
    x_r = x[start:]
    fixed_r = {f - start for f in fixed if f > start}
    idx = sorted(set(_candidates(x_r, settings)) | fixed_r)
    # A detected point next to an annotation is the annotated change, not a second one.
    idx = [i for i in idx if i in fixed_r or all(abs(i - f) > 2 for f in fixed_r)]
    reps_r = reps[start:] if reps is not None else None
    # First pass as if the noise were independent; the residuals around what it found tell the noise's
    # autocorrelation, and a second pass with the variance inflation it implies has the last word.
    cap = min(max(settings.max_autocorrelation, 0.0), 0.9)
    noise = _noise(diff_sigma, min(lag1_autocorrelation(x), cap), 0.0)
    merged = _merge([_Candidate(i) for i in idx], fixed_r, x_r, noise, settings, reps_r, n_total=n)
    rho = min(residual_autocorrelation(x_r, [c.index for c in merged]), cap)
    if rho > 0.0:
        noise = _noise(diff_sigma, rho, rho)
        merged = _merge([_Candidate(i) for i in idx], fixed_r, x_r, noise, settings, reps_r, n_total=n)
    sigma = noise.sigma
    order = [c.index for c in merged]
    sums = _Sums(x_r)

    def plain_p(i: int) -> float:
        # The reported p-value: the Welch test between the neighbouring segments (what a reader can
        # recompute from the trail); the decision used it with the autocorrelation allowed for.
        lo, hi = _bounds(i, order, x_r.size)
        m1, v1 = sums.mean_var(lo, i)
        m2, v2 = sums.mean_var(i, hi)
        p = welch_p(m1, v1, i - lo, m2, v2, hi - i)
        rp = _replicate_p(reps_r, slice(lo, i), slice(i, hi))
        return max(p, rp) if rp is not None else p

    found = [replace(_classify(c, sigma, settings, c.index in fixed_r, plain_p(c.index), max(rho, 0.0)),
                     index=int(pos[c.index + start]))
             for c in merged]
    return DetectionResult(kept + found, len(values))


def detect(values: Sequence[float] | NDArray[np.float64], *,
           replicates: Sequence[Sequence[float]] | None = None,
           settings: Settings | None = None,
           known: Sequence[int] = ()) -> list[ChangePoint]:
    """Change points of a trail. `values[i]` is the trail's value for the i-th version (NaN = invalid run,
    skipped); `replicates[i]`, when given, the raw repetitions behind it; `known` are annotated indices."""
    return analyse(values, replicates=replicates, settings=settings, known=known).change_points


def analyse(values: Sequence[float] | NDArray[np.float64], *,
            replicates: Sequence[Sequence[float]] | None = None,
            settings: Settings | None = None,
            known: Sequence[int] = ()) -> DetectionResult:
    """Like `detect`, returning the state `detect_incremental` continues from."""
    return _run(values, replicates, settings or Settings(), known, None, 0)


def detect_incremental(values: Sequence[float] | NDArray[np.float64], previous_result: DetectionResult,
                       new_count: int, settings: Settings | None = None, *,
                       replicates: Sequence[Sequence[float]] | None = None,
                       known: Sequence[int] = ()) -> DetectionResult:
    """Re-analyse a trail after `new_count` versions were appended to the one `previous_result` saw.
    Change points more than two windows before the end are kept; only the tail is rescanned. Falls
    back to a full analysis when the trail is too short or does not extend the previous one."""
    return _run(values, replicates, settings or Settings(), known, previous_result, new_count)

"""The repetition is the unit: A/B statistics over per-repetition values and, for one repetition per
side, a block bootstrap over time. Every expected value comes from scipy, numpy or arch applied
directly to the per-repetition values or the raw samples, never from the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from arch.bootstrap import StationaryBootstrap, optimal_block_length
from hdrh.histogram import HdrHistogram
from scipy import stats
from scipy.signal import lfilter

from benchtrail.analysis.ab import Repetition, Timeline, compare


def ar1_lognormal(rng: np.random.Generator, n: int, rho: float = 0.9, sigma: float = 0.3,
                  median: float = 10_000.0, offset: float = 0.0) -> np.ndarray:
    e = rng.standard_normal(n) * math.sqrt(1 - rho ** 2)
    e[0] = rng.standard_normal()
    return np.round(median * np.exp(sigma * lfilter([1.0], [1.0, -rho], e) + offset))


def encode(samples: np.ndarray) -> str:
    h = HdrHistogram(1, 3_600_000_000, 3)
    values, counts = np.unique(samples.astype(np.int64), return_counts=True)
    for v, c in zip(values, counts):
        h.record_value(int(v), int(c))
    return h.encode().decode()


def brute_cliffs_delta(ref: np.ndarray, var: np.ndarray) -> float:
    return float(sum(np.sign(v - r) for v in var for r in ref) / (len(ref) * len(var)))


def p75(x: np.ndarray) -> float:
    return float(np.percentile(x, 75, method="inverted_cdf"))


def test_student_t_over_repetitions_equals_scipy() -> None:
    rng = np.random.default_rng(11)
    ref = [rng.integers(900, 1300, 3000).astype(float) for _ in range(3)]       # few distinct values
    var = [rng.integers(950, 1400, 3000).astype(float) for _ in range(3)]
    r = compare(ref, var, kind="latency_p75")
    a, b = np.array([p75(x) for x in ref]), np.array([p75(x) for x in var])
    assert r.ref_values == pytest.approx(tuple(a)) and r.var_values == pytest.approx(tuple(b))
    t = stats.ttest_ind(b, a)                       # Student, pooled variance: equal repetitions
    ci = t.confidence_interval(0.95)
    assert (r.ci_low, r.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert r.p_value == pytest.approx(t.pvalue)
    assert r.abs_diff == pytest.approx(b.mean() - a.mean())
    assert r.reference == pytest.approx(a.mean())
    se = math.sqrt(((a.var(ddof=1) + b.var(ddof=1)) / 2) * (2 / 3))
    assert r.mde == pytest.approx((stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)) * se)
    assert r.mw_p == pytest.approx(stats.mannwhitneyu(b, a).pvalue)
    assert r.cliffs_delta == pytest.approx(brute_cliffs_delta(a, b))
    assert (r.n_ref, r.n_var, r.method, r.paired) == (3, 3, "t-repetitions", False)


def test_welch_when_repetition_counts_differ() -> None:
    rng = np.random.default_rng(12)
    ref = [rng.normal(100, 5, 400) for _ in range(3)]
    var = [rng.normal(104, 5, 400) + rng.normal(0, 3) for _ in range(5)]
    r = compare(ref, var, kind="mean")
    a, b = np.array([x.mean() for x in ref]), np.array([x.mean() for x in var])
    t = stats.ttest_ind(b, a, equal_var=False)
    ci = t.confidence_interval(0.95)
    assert r.method == "welch-t-repetitions"
    assert (r.ci_low, r.ci_high) == (pytest.approx(ci.low, rel=1e-3), pytest.approx(ci.high, rel=1e-3))
    assert r.p_value == pytest.approx(t.pvalue, rel=1e-3)


def test_paired_by_position_when_interleaved_with_enough_pairs() -> None:
    rng = np.random.default_rng(13)
    drift = np.linspace(0, 30, 12)                   # the host slows down over the run
    ref_vals = 100 + drift[0::2] + rng.normal(0, 1, 6)
    var_vals = 103 + drift[1::2] + rng.normal(0, 1, 6)
    # given out of order: the positions (ABAB... execution order) decide the pairs
    perm = [3, 0, 5, 1, 4, 2]
    ref = [Repetition(stats={"mean": ref_vals[i]}, position=2 * i) for i in perm]
    var = [Repetition(stats={"mean": var_vals[i]}, position=2 * i + 1) for i in perm[::-1]]
    r = compare(ref, var, kind="mean")
    t = stats.ttest_rel(var_vals, ref_vals)
    ci = t.confidence_interval(0.95)
    assert r.method == "paired-t-repetitions" and r.paired
    assert (r.ci_low, r.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert r.p_value == pytest.approx(t.pvalue)
    assert r.ref_positions == (0, 2, 4, 6, 8, 10) and r.var_values == pytest.approx(tuple(var_vals))
    assert r.ci_low > 0                              # the drift is paired away
    assert stats.ttest_ind(var_vals, ref_vals).pvalue > 0.05  # unpaired, the drift would hide it


def test_three_pairs_are_compared_unpaired() -> None:
    ref = [Repetition(stats={"mean": v}, position=2 * i) for i, v in enumerate([10.0, 10.4, 9.9])]
    var = [Repetition(stats={"mean": v}, position=2 * i + 1) for i, v in enumerate([10.8, 11.1, 10.7])]
    r = compare(ref, var)
    assert r.method == "t-repetitions" and not r.paired
    ci = stats.ttest_ind([10.8, 11.1, 10.7], [10.0, 10.4, 9.9]).confidence_interval()
    assert (r.ci_low, r.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_histogram_repetitions_read_each_repetition_percentile() -> None:
    rng = np.random.default_rng(14)
    ref = [rng.lognormal(9, 0.4, 20_000).astype(np.int64) for _ in range(3)]
    var = [(x * 1.1).astype(np.int64) for x in ref]
    r = compare([Repetition(histogram=encode(x)) for x in ref], [Repetition(histogram=encode(x)) for x in var],
                kind="latency_p99", scale=1e-3)
    exact = [np.percentile(x, 99, method="inverted_cdf") / 1e3 for x in ref]
    assert r.ref_values == pytest.approx(exact, rel=1e-3)                 # HDR: 3 significant digits
    # Exact statistics given with the histogram win over the histogram.
    given = compare([Repetition(histogram=encode(x), stats={"p99": float(np.percentile(x, 99, method="inverted_cdf"))})
                     for x in ref], [Repetition(histogram=encode(x)) for x in var], kind="p99", scale=1e-3)
    assert given.ref_values == pytest.approx(exact, rel=1e-12)
    assert r.verdict in ("medium", "small") and r.worse is True


def chunks(x: np.ndarray, k: int = 200) -> list[np.ndarray]:
    return np.array_split(x, k)


def test_single_repetition_block_bootstrap_of_the_mean_matches_arch() -> None:
    rng = np.random.default_rng(15)
    a, b = ar1_lognormal(rng, 30_000), ar1_lognormal(rng, 30_000) * 1.02
    r = compare(a, b, kind="mean", scale=1e-3, n_boot=3000)
    assert r.method == "block-bootstrap-time"
    assert r.abs_diff == pytest.approx((b.mean() - a.mean()) / 1e3)
    # Independent: arch on the 200 time-ordered chunks of each repetition.
    ends = []
    draws = []
    for x, seed in ((a, 1), (b, 2)):
        parts = chunks(x)
        n = np.array([p.size for p in parts], float)
        s = np.array([p.sum() for p in parts]) / 1e3
        block = optimal_block_length(s / n)["stationary"].iloc[0]
        bs = StationaryBootstrap(max(block, 1.0), n, s, seed=np.random.default_rng(seed))
        draws.append(bs.apply(lambda n, s: np.array([s.sum() / n.sum()]), 3000)[:, 0])
        ends.append(block)
    d = draws[1] - draws[0]
    lo, hi = np.quantile(d, [0.025, 0.975])
    width = hi - lo
    assert abs(r.ci_low - lo) < 0.15 * width and abs(r.ci_high - hi) < 0.15 * width
    assert r.block_length == pytest.approx(max(max(ends), 1.0))
    # Resampling requests as if independent would give an interval several times too narrow.
    iid_sd = math.sqrt(a.var() / a.size + b.var() / b.size) / 1e3
    assert width / (2 * 1.96 * iid_sd) > 2.5


def test_single_repetition_percentile_matches_a_direct_block_bootstrap() -> None:
    rng = np.random.default_rng(16)
    a, b = ar1_lognormal(rng, 30_000), ar1_lognormal(rng, 30_000)
    r = compare(a, b, kind="p90", n_boot=2000)
    assert r.method == "block-bootstrap-time" and r.effective_n >= 10
    # Independent: resample blocks of chunks with arch and recompute the percentile of the samples.
    draws = []
    for x, seed in ((a, 3), (b, 4)):
        parts = chunks(x)
        frac = np.array([np.mean(p <= np.percentile(x, 90, method="inverted_cdf")) for p in parts])
        block = max(optimal_block_length(frac)["stationary"].iloc[0], 1.0)
        bs = StationaryBootstrap(block, np.arange(len(parts)), seed=np.random.default_rng(seed))
        out = []
        for _ in range(1000):
            idx = bs.update_indices()
            out.append(np.percentile(np.concatenate([parts[i] for i in idx]), 90, method="inverted_cdf"))
        draws.append(np.array(out))
    d = draws[1] - draws[0]
    lo, hi = np.quantile(d, [0.025, 0.975])
    width = hi - lo
    assert abs(r.ci_low - lo) < 0.2 * width and abs(r.ci_high - hi) < 0.2 * width


def test_single_repetition_a_a_false_positives_are_rare_without_run_offsets() -> None:
    rng = np.random.default_rng(17)
    called = 0
    for i in range(40):
        r = compare(ar1_lognormal(rng, 20_000), ar1_lognormal(rng, 20_000), kind="p75", n_boot=400, seed=i)
        called += r.ci_low > 0 or r.ci_high < 0
    assert called <= 6          # 5% expected: 2 of 40; iid resampling calls most of them


def test_too_noisy_without_enough_time_order() -> None:
    rng = np.random.default_rng(18)
    x = rng.lognormal(9, 0.3, 5000)
    lone = compare(encode(x), encode(x * 1.3), kind="p75")
    assert lone.method == "no-time-order" and lone.verdict == "too noisy to tell"
    assert math.isnan(lone.ci_low) and lone.abs_diff > 0
    few = Timeline(counts=[100] * 8, sums=[1e6] * 8, at_or_below={"p75": [75] * 8}, thresholds={"p75": 1.0})
    short = compare([Repetition(samples=x, timeline=few)], [Repetition(samples=x * 1.3, timeline=few)], kind="p75")
    assert short.method == "block-bootstrap-time" and short.verdict == "too noisy to tell"


def test_effective_sample_size_too_small_is_too_noisy() -> None:
    # One slow wave over the whole repetition: 200 intervals, but hardly any independent ones.
    t = np.arange(60_000)
    x = np.round(10_000 * np.exp(0.3 * np.sin(t / 60_000 * 2 * np.pi)))
    r = compare(x, x * 1.001, kind="mean")
    assert r.method == "block-bootstrap-time"
    assert r.effective_n < 10 and r.verdict == "too noisy to tell"


@pytest.mark.parametrize("block", [1.0, 2.5, 4.0, 37.0])   # both paths: per point below 4, per block from 4
def test_stationary_block_sums_follow_arch_stationary_bootstrap(block: float) -> None:
    from benchtrail.analysis.ab import stationary_block_sums

    t, n = 150, 4000
    x = lfilter([1.0], [1.0, -0.7], np.random.default_rng(3).standard_normal(t))
    ones = np.ones(t)
    ours = stationary_block_sums(np.vstack([ones, x, np.arange(t, dtype=float)]), block, n, np.random.default_rng(1))
    bs = StationaryBootstrap(block, np.arange(t), seed=np.random.default_rng(2))
    theirs = np.stack([bs.update_indices() for _ in range(n)])
    # Every resample has exactly t points.
    assert ours.shape == (n, 3) and np.all(ours[:, 0] == t)
    # Uniform coverage: the mean resampled sum of the point positions is t * (t - 1) / 2, as for arch.
    assert ours[:, 2].mean() == pytest.approx(t * (t - 1) / 2, rel=0.01)
    assert theirs.sum(axis=1).mean() == pytest.approx(t * (t - 1) / 2, rel=0.01)
    # The variance of a resampled mean of an AR(1) series agrees with arch's (the blocks' lengths matter).
    assert (ours[:, 1] / t).var() == pytest.approx(x[theirs].mean(axis=1).var(), rel=0.12)
    # The resampled mean of x agrees with arch's, block by block it must stay centred on x's mean.
    assert (ours[:, 1] / t).mean() == pytest.approx(x[theirs].mean(axis=1).mean(), abs=0.05 * x.std())


def test_one_repetition_against_two_uses_both_with_the_pooled_t() -> None:
    ref = [Repetition(stats={"mean": 10.0}, position=0)]
    var = [Repetition(stats={"mean": v}, position=i + 1) for i, v in enumerate([10.6, 11.0])]
    r = compare(ref, var)
    ci = stats.ttest_ind([10.6, 11.0], [10.0]).confidence_interval()
    assert r.method == "t-repetitions" and (r.n_ref, r.n_var) == (1, 2)
    assert (r.ci_low, r.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_a_percentile_recorded_in_steps_is_known_only_to_its_rounding() -> None:
    """hey's 0.1 ms steps: eight interleaved repetitions a side whose P75 is exactly 0.3 and 0.4 ms. Without
    the step the paired t has no variance (an interval of zero width, p = 0); with it each arm adds the
    variance of a rounding uniform over one step, (0.1 ms)²/12, whatever the number of repetitions."""
    h = 100.0                                          # µs
    ref = [Repetition(stats={"p75": 300.0}, position=2 * i, step=h) for i in range(8)]
    var = [Repetition(stats={"p75": 400.0}, position=2 * i + 1, step=h) for i in range(8)]
    r = compare(ref, var, kind="latency_p75", scale=1e-3)
    se = math.sqrt(2 * (h * 1e-3) ** 2 / 12)
    half = stats.t.ppf(0.975, 7) * se
    assert r.method == "paired-t-repetitions"
    assert (r.ci_low, r.ci_high) == (pytest.approx(0.1 - half), pytest.approx(0.1 + half))
    assert r.p_value == pytest.approx(2 * stats.t.sf(0.1 / se, 7))
    assert r.ci_low > 0 and r.worse is True

    # Two repetitions a side, Student t with 2 degrees of freedom: a step apart is not enough to tell.
    two = compare(ref[:2], var[:2], kind="latency_p75", scale=1e-3)
    half = stats.t.ppf(0.975, 2) * se
    assert two.method == "t-repetitions"
    assert (two.ci_low, two.ci_high) == (pytest.approx(0.1 - half), pytest.approx(0.1 + half))
    assert two.verdict == "too noisy to tell"

    # Each arm its own step (JMeter's 1 ms against a µs tool), and values that vary: the variance of the
    # values (scipy's Welch) plus both roundings.
    a, b = [2.0, 3.0, 2.0], [3.0, 3.0, 4.0, 3.0]
    mixed = compare([Repetition(stats={"p99": v * 1000}, position=i, step=1000.0) for i, v in enumerate(a)],
                    [Repetition(stats={"p99": v * 1000}, position=10 + i, step=1.0) for i, v in enumerate(b)],
                    kind="latency_p99", scale=1e-3)
    va, vb = np.var(a, ddof=1) / 3, np.var(b, ddof=1) / 4
    df = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 3)
    se = math.sqrt(va + vb + 1.0 / 12 + 1e-6 / 12)
    diff = np.mean(b) - np.mean(a)
    assert mixed.method == "welch-t-repetitions"
    assert mixed.ci_low == pytest.approx(diff - stats.t.ppf(0.975, df) * se)

    # The mean of many samples is not rounded that way: nothing added.
    means = compare([Repetition(stats={"mean": v}, step=100.0) for v in (300.0, 310.0)],
                    [Repetition(stats={"mean": v}, step=100.0) for v in (400.0, 390.0)], kind="mean")
    ci = stats.ttest_ind([400.0, 390.0], [300.0, 310.0]).confidence_interval()
    assert (means.ci_low, means.ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))


def test_a_single_repetition_percentile_in_steps_widens_the_bootstrap_interval_by_its_rounding() -> None:
    """One repetition a side: the block bootstrap's interval, each side moved out by the rounding
    (1.96 · √(2 h²/12)) added in quadrature to its distance from the difference."""
    rng = np.random.default_rng(21)
    a, b = ar1_lognormal(rng, 30_000), ar1_lognormal(rng, 30_000, offset=0.05)
    plain = compare(a, b, kind="p90", n_boot=2000)
    h = 1000.0
    steps = compare([Repetition(samples=a, step=h)], [Repetition(samples=b, step=h)], kind="p90", n_boot=2000)
    diff, w = plain.abs_diff, 1.959963984540054 ** 2 * 2 * h ** 2 / 12
    assert steps.method == plain.method == "block-bootstrap-time" and steps.abs_diff == plain.abs_diff
    assert steps.ci_low == pytest.approx(diff - math.sqrt((diff - plain.ci_low) ** 2 + w))
    assert steps.ci_high == pytest.approx(diff + math.sqrt((plain.ci_high - diff) ** 2 + w))

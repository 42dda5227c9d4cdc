"""A/B comparison against independent computations (scipy, numpy, brute force)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram
from scipy import stats

from benchtrail.analysis.ab import Replicates, compare


def brute_cliffs_delta(ref: np.ndarray, var: np.ndarray) -> float:
    gt = lt = 0
    for v in var:
        gt += int(np.sum(v > ref))
        lt += int(np.sum(v < ref))
    return (gt - lt) / (len(ref) * len(var))


def encode(samples: np.ndarray) -> str:
    h = HdrHistogram(1, 60_000_000, 3)
    values, counts = np.unique(samples, return_counts=True)
    for v, c in zip(values, counts):
        h.record_value(int(v), int(c))
    return h.encode().decode()


def test_samples_rank_tests_and_point_estimates() -> None:
    rng = np.random.default_rng(1)
    ref = rng.integers(900, 1300, 800).astype(float)       # ties on purpose
    var = rng.integers(950, 1400, 700).astype(float)
    r = compare(ref, var, kind="mean")
    assert r.abs_diff == pytest.approx(var.mean() - ref.mean())
    assert r.rel_diff == pytest.approx((var.mean() - ref.mean()) / ref.mean())
    assert r.mw_p == pytest.approx(stats.mannwhitneyu(var, ref, method="asymptotic").pvalue, rel=1e-6)
    assert r.cliffs_delta == pytest.approx(brute_cliffs_delta(ref, var))
    assert r.ci_low < r.abs_diff < r.ci_high
    assert (r.n_ref, r.n_var, r.method) == (800, 700, "bootstrap-samples")


def test_percentile_kind_uses_that_percentile_and_is_deterministic() -> None:
    rng = np.random.default_rng(2)
    ref = rng.lognormal(3, 0.4, 3000)
    var = rng.lognormal(3.1, 0.4, 3000)
    r1 = compare(ref, var, kind="latency_p75")
    r2 = compare(ref, var, kind="latency_p75")
    p_ref = np.percentile(ref, 75, method="inverted_cdf")
    p_var = np.percentile(var, 75, method="inverted_cdf")
    assert r1.statistic == "p75"
    assert r1.abs_diff == pytest.approx(p_var - p_ref)
    assert (r1.ci_low, r1.ci_high) == (r2.ci_low, r2.ci_high)
    # Independent bootstrap of the percentile difference with numpy: the interval ends agree.
    boot = np.random.default_rng(0)
    d = [np.percentile(boot.choice(var, var.size), 75, method="inverted_cdf")
         - np.percentile(boot.choice(ref, ref.size), 75, method="inverted_cdf") for _ in range(1000)]
    lo, hi = np.quantile(d, [0.025, 0.975])
    width = hi - lo
    assert abs(r1.ci_low - lo) < 0.15 * width and abs(r1.ci_high - hi) < 0.15 * width


def test_histogram_one_million_samples_is_fast_and_exact_to_hdr_precision() -> None:
    rng = np.random.default_rng(3)
    ref = rng.lognormal(8, 0.5, 1_000_000).astype(np.int64)
    var = (ref * 1.04).astype(np.int64)
    ea, eb = encode(ref), encode(var)
    t0 = time.perf_counter()
    r = compare(ea, eb, kind="p99", scale=1e-3)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.0
    exact = (np.percentile(var, 99, method="inverted_cdf") - np.percentile(ref, 99, method="inverted_cdf")) / 1e3
    ref_p99 = np.percentile(ref, 99, method="inverted_cdf") / 1e3
    assert r.abs_diff == pytest.approx(exact, abs=0.002 * ref_p99)
    assert r.ci_low <= exact * 1.002 + 0.002 * ref_p99 and r.ci_high >= exact - 0.002 * ref_p99
    assert r.method == "bootstrap-histogram" and r.n_ref == 1_000_000
    assert r.verdict == "small" and r.worse is True


def test_replicates_interval_covers_true_difference_mostly() -> None:
    rng = np.random.default_rng(4)
    covered = 0
    for i in range(120):
        a = 100 + rng.normal(0, 2, 8)
        b = 110 + rng.normal(0, 2, 8)
        r = compare(Replicates(list(a)), Replicates(list(b)), seed=i, n_boot=800)
        covered += r.ci_low <= 10 <= r.ci_high
    assert covered / 120 >= 0.90


def test_verdicts_and_direction() -> None:
    rng = np.random.default_rng(5)
    same = rng.normal(100, 1, 4000)
    assert compare(same, same + 0.01, kind="mean").verdict == "no difference"
    noisy = compare(Replicates([100, 140, 80]), Replicates([110, 70, 150]))
    assert noisy.verdict == "too noisy to tell" and noisy.worse is None
    large = compare(same, same * 1.5, direction="higher")
    assert large.verdict == "large" and large.worse is False   # throughput up is better
    assert large.mde < abs(large.abs_diff)


def test_mde_shrinks_with_more_repetitions() -> None:
    rng = np.random.default_rng(6)
    few = compare(Replicates(list(100 + rng.normal(0, 3, 4))), Replicates(list(100 + rng.normal(0, 3, 4))))
    many = compare(Replicates(list(100 + rng.normal(0, 3, 40))), Replicates(list(100 + rng.normal(0, 3, 40))))
    assert many.mde < few.mde

"""A/B comparison against independent computations (scipy, numpy, brute force). The repetition
paths (t over repetitions, block bootstrap over time) are in test_ab_repetitions.py."""

from __future__ import annotations


import numpy as np
from hdrh.histogram import HdrHistogram

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
    same = [rng.normal(100, 1, 500) for _ in range(3)]
    assert compare(same, [s + 0.01 for s in same], kind="mean").verdict == "no difference"
    noisy = compare(Replicates([100, 140, 80]), Replicates([110, 70, 150]))
    assert noisy.verdict == "too noisy to tell" and noisy.worse is None
    large = compare(same, [s * 1.5 for s in same], direction="higher")
    assert large.verdict == "large" and large.worse is False   # throughput up is better
    assert large.mde < abs(large.abs_diff)


def test_mde_shrinks_with_more_repetitions() -> None:
    rng = np.random.default_rng(6)
    few = compare(Replicates(list(100 + rng.normal(0, 3, 4))), Replicates(list(100 + rng.normal(0, 3, 4))))
    many = compare(Replicates(list(100 + rng.normal(0, 3, 40))), Replicates(list(100 + rng.normal(0, 3, 40))))
    assert many.mde < few.mde

"""Detector behaviour on synthetic trails with known truth."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import stats

from benchtrail.analysis.changepoints import (
    Settings,
    analyse,
    detect,
    detect_incremental,
    hampel,
    noise_sigma,
    welch_p,
)


def step_trail(n: int, at: int, size: float, seed: int, level: float = 100.0) -> np.ndarray:
    y = level + np.random.default_rng(seed).normal(0, 1, n)
    y[at:] += size
    return y


def test_welch_p_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 17), rng.normal(0.8, 2, 29)
    expected = stats.ttest_ind(a, b, equal_var=False).pvalue
    got = welch_p(a.mean(), a.var(ddof=1), a.size, b.mean(), b.var(ddof=1), b.size)
    assert got == pytest.approx(expected, rel=1e-9)


def test_noise_sigma_ignores_steps_and_hampel_removes_single_outliers() -> None:
    y = step_trail(400, 200, 10.0, seed=1)
    assert noise_sigma(y) == pytest.approx(1.0, rel=0.15)
    spiked = y.copy()
    spiked[50] += 30
    cleaned = hampel(spiked)
    assert abs(cleaned[50] - np.median(spiked[47:54])) < 1e-9
    assert np.array_equal(np.delete(cleaned, 50), np.delete(spiked, 50))


@pytest.mark.parametrize("size", [3.0, -3.0])
def test_finds_a_step_with_its_magnitude_and_direction(size: float) -> None:
    y = step_trail(300, 170, size, seed=2)
    cps = detect(y, settings=Settings(direction="lower"))
    assert len(cps) == 1
    cp = cps[0]
    assert abs(cp.index - 170) <= 2
    assert cp.before_mean == pytest.approx(y[:cp.index].mean())
    assert cp.after_mean == pytest.approx(y[cp.index:].mean())
    assert cp.magnitude_abs == pytest.approx(size, abs=0.4)
    assert cp.magnitude_rel == pytest.approx(cp.magnitude_abs / cp.before_mean)
    assert cp.direction == ("regression" if size > 0 else "improvement")   # lower is better
    assert cp.p_value < 1e-6


def test_higher_is_better_flips_direction() -> None:
    y = step_trail(200, 100, -4.0, seed=3)
    (cp,) = detect(y, settings=Settings(direction="higher"))
    assert cp.direction == "regression"


def test_noise_and_single_outliers_raise_no_alarm() -> None:
    rng = np.random.default_rng(4)
    alarms = 0
    for _ in range(20):
        y = 100 + rng.normal(0, 1, 500)
        y[rng.integers(0, 500, 5)] += 8
        alarms += len(detect(y))
    assert alarms == 0


def test_recall_on_two_sigma_steps() -> None:
    hits = 0
    for seed in range(30):
        at = 40 + 3 * seed
        hits += any(abs(cp.index - at) <= 5 for cp in detect(step_trail(200, at, 2.0, seed=100 + seed)))
    assert hits >= 24


def test_minimum_magnitude_in_percent_suppresses_small_changes() -> None:
    y = step_trail(200, 100, 3.0, seed=5)          # 3% of a level of 100
    assert len(detect(y, settings=Settings(min_magnitude_pct=5.0))) == 0
    assert len(detect(y, settings=Settings(min_magnitude_pct=2.0))) == 1


def test_invalid_runs_are_skipped_and_indices_stay_the_callers() -> None:
    y = step_trail(200, 120, 4.0, seed=6)
    y[[10, 119, 150]] = np.nan
    (cp,) = detect(y)
    assert 118 <= cp.index <= 122 and np.isfinite(y[cp.index])


def test_known_change_point_is_reported_as_known_and_does_not_mask_another() -> None:
    y = step_trail(300, 100, 5.0, seed=7)
    y[200:] += 4.0
    cps = detect(y, known=[100])
    assert [(c.index, c.known) for c in cps][0] == (100, True)
    assert cps[0].direction == "known"
    assert any(abs(c.index - 200) <= 2 and not c.known for c in cps)


def test_replicates_veto_a_change_their_raw_values_do_not_support() -> None:
    rng = np.random.default_rng(8)
    y = step_trail(120, 60, 3.0, seed=8)
    # Replicates around each point with a spread so wide that the step is within run-to-run noise.
    noisy = [list(v + rng.normal(0, 40, 3)) for v in y]
    tight = [list(v + rng.normal(0, 0.1, 3)) for v in y]
    assert len(detect(y, replicates=tight)) == 1
    assert len(detect(y, replicates=noisy)) == 0


def test_incremental_matches_full_and_is_fast() -> None:
    y = step_trail(10_000, 3000, 3.0, seed=9)
    y[7000:] -= 3.0
    y[9900:] += 4.0
    prev = analyse(y[:-5])
    t0 = time.perf_counter()
    inc = detect_incremental(y, prev, 5)
    elapsed = time.perf_counter() - t0
    full = analyse(y)
    # The tail is rescanned with differently aligned windows, so a point may move by one or two.
    assert len(inc.change_points) == len(full.change_points)
    assert all(abs(a.index - b.index) <= 2 for a, b in zip(inc.change_points, full.change_points))
    assert [abs(c.index - t) <= 2 for c, t in zip(full.change_points, (3000, 7000, 9900))] == [True] * 3
    assert elapsed < 0.2

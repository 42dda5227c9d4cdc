"""Detector behaviour on synthetic trails with known truth."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import stats

from benchtrail.analysis.changepoints import (
    Settings,
    _Sums,
    analyse,
    bump_p,
    detect,
    detect_incremental,
    hampel,
    lag1_autocorrelation,
    mosum_candidates,
    mosum_statistic,
    noise_sigma,
    residual_autocorrelation,
    welch_p,
)


def step_trail(n: int, at: int, size: float, seed: int, level: float = 100.0) -> np.ndarray:
    y = level + np.random.default_rng(seed).normal(0, 1, n)
    y[at:] += size
    return y


def ar1(n: int, rho: float, seed: int) -> np.ndarray:
    """AR(1) noise with unit marginal variance (burn-in 50)."""
    rng = np.random.default_rng(seed)
    e = rng.normal(0, 1, n + 50)
    z = np.empty_like(e)
    z[0] = e[0]
    for i in range(1, e.size):
        z[i] = rho * z[i - 1] + np.sqrt(1 - rho * rho) * e[i]
    return z[50:]


def test_welch_p_with_variance_inflation_matches_scipy_on_effective_sizes() -> None:
    # Autocorrelated segments: a mean holds the information of n / f independent points.
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 40), rng.normal(0.9, 1.5, 25)
    f = 1.3 / 0.7
    expected = stats.ttest_ind_from_stats(a.mean(), a.std(ddof=1), a.size / f, b.mean(), b.std(ddof=1),
                                          b.size / f, equal_var=False).pvalue
    got = welch_p(a.mean(), a.var(ddof=1), a.size, b.mean(), b.var(ddof=1), b.size, inflation=f)
    assert got == pytest.approx(expected, rel=1e-9)


def test_noise_estimates_under_autocorrelation() -> None:
    z = ar1(4000, 0.5, seed=40)
    y = 100 + z
    y[2000:] += 6.0                     # a step must not pass for autocorrelation
    truth = np.corrcoef(z[1:], z[:-1])[0, 1]
    assert lag1_autocorrelation(y) == pytest.approx(truth, abs=0.06)
    assert residual_autocorrelation(y, [2000]) == pytest.approx(truth, abs=0.04)
    # Residuals around the wrong segmentation (the step missed) look strongly autocorrelated.
    assert residual_autocorrelation(y, []) > truth + 0.2
    # First differences alone shrink sigma by sqrt(1 - rho); the corrected estimate does not.
    d = np.diff(z)
    naive = 1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2)
    assert naive == pytest.approx(np.std(z) * np.sqrt(1 - truth), rel=0.08)
    assert noise_sigma(y) == pytest.approx(np.std(z), rel=0.1)


def test_a_regression_and_its_fix_are_both_found() -> None:
    """Two 3 sigma steps 10..25 points apart in 60-point trails (judged on the whole trail, the
    old detector found both in about 7% of such trails)."""
    both = 0
    for seed in range(40):
        a = 15 + seed % 12
        b = a + 10 + seed % 16
        y = 100 + np.random.default_rng(1000 + seed).normal(0, 1, 60)
        y[a:b] += 3.0
        cps = detect(y, settings=Settings(direction="lower"))
        found = {c.direction: c.index for c in cps}
        both += (len(cps) == 2 and abs(found.get("regression", -99) - a) <= 3
                 and abs(found.get("improvement", -99) - b) <= 3)
    assert both >= 34


def test_staircase_of_two_steps_in_a_short_trail() -> None:
    y = step_trail(60, 20, 3.0, seed=41)
    y[34:] += 3.0
    cps = detect(y)
    assert [abs(c.index - t) <= 2 for c, t in zip(cps, (20, 34))] == [True, True] and len(cps) == 2
    assert cps[0].before_mean == pytest.approx(y[:cps[0].index].mean())
    assert cps[0].after_mean == pytest.approx(y[cps[0].index:cps[1].index].mean())


def test_autocorrelated_noise_raises_almost_no_alarm() -> None:
    alarms = sum(len(detect(100 + ar1(60, 0.3, seed=2000 + s))) for s in range(100))
    assert alarms <= 2                     # 6,000 points; the target is 0.1 per 1,000
    alarms = sum(len(detect(100 + ar1(300, 0.6, seed=3000 + s))) for s in range(20))
    assert alarms <= 1


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


def test_mosum_statistic_matches_window_means() -> None:
    rng = np.random.default_rng(71)
    x = rng.normal(0, 1, 80)
    x[30:] += 2.0
    g, sigma = 8, 1.3
    got = mosum_statistic(x, g, sigma)
    for t in range(80):
        if g <= t <= 80 - g:
            expected = abs(np.mean(x[t:t + g]) - np.mean(x[t - g:t])) / (sigma * np.sqrt(2.0 / g))
            assert got[t] == pytest.approx(expected, rel=1e-9)
        else:
            assert got[t] == 0.0


def test_mosum_candidates_propose_both_edges_of_a_short_bump() -> None:
    y = 100 + np.random.default_rng(72).normal(0, 1, 60)
    y[22:34] += 3.0
    found = mosum_candidates(y, (5, 10), 2.5, 3)
    assert any(abs(i - 22) <= 2 for i in found) and any(abs(i - 34) <= 2 for i in found)


def test_bump_p_is_welch_between_inside_and_outside() -> None:
    rng = np.random.default_rng(73)
    x = rng.normal(0, 1, 70)
    x[25:40] += 1.5
    sums = _Sums(x)
    lo, i, j, hi = 5, 25, 40, 65
    inside, outside = x[i:j], np.concatenate([x[lo:i], x[j:hi]])
    p, diff = bump_p(sums, lo, i, j, hi)
    assert p == pytest.approx(stats.ttest_ind(outside, inside, equal_var=False).pvalue, rel=1e-6)
    assert diff == pytest.approx(inside.mean() - outside.mean(), rel=1e-9)
    # With autocorrelation allowed for: the same test on n / f effective points per side.
    f = 1.5
    p_f, _ = bump_p(sums, lo, i, j, hi, inflation=f)
    expected = stats.ttest_ind_from_stats(outside.mean(), outside.std(ddof=1), outside.size / f,
                                          inside.mean(), inside.std(ddof=1), inside.size / f,
                                          equal_var=False).pvalue
    assert p_f == pytest.approx(expected, rel=1e-6)


def test_skewed_autocorrelated_noise_with_outliers_raises_almost_no_alarm() -> None:
    """The issue's hard noise: AR(1) rho 0.3 through a lognormal (log-sd 0.5), standardised, plus 1%
    outliers of 6 sigma. 300 trails of 60 points; the target is 0.1 alarms per 1,000 points."""
    rng = np.random.default_rng(74)
    alarms = 0
    for s in range(300):
        z = ar1(60, 0.3, seed=5000 + s)
        y = (np.exp(0.5 * z) - np.exp(0.125)) / np.sqrt((np.exp(0.25) - 1) * np.exp(0.25))
        spikes = rng.random(60) < 0.01
        y[spikes] += 6 * rng.choice([-1, 1], spikes.sum())
        alarms += len(detect(50 + y))
    assert alarms <= 4                     # 18,000 points: 0.1 per 1,000 would be 1.8


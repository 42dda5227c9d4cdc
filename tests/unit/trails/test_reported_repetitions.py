"""A resource metric sampled in each repetition (CPU of each interleaved step) gets an interval over
the repetitions, checked against scipy's pooled Student t on the same values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from benchtrail.models import Cell
from benchtrail.trails import overhead


def cell(cpu: list[float]) -> Cell:
    return Cell(cpu_pct=float(np.mean(cpu)), extra={"repetitions_reported": [{"cpu_pct": v} for v in cpu]},
                params={}, replicates=[])


def test_cpu_overhead_interval_is_the_t_interval_over_repetitions():
    ref, var = [41.0, 43.5, 42.2], [55.1, 52.8, 54.0]
    result = overhead.ab(overhead.evidence(cell(ref), "cpu_pct"), overhead.evidence(cell(var), "cpu_pct"), "cpu_pct")
    a, b = np.array(ref), np.array(var)
    diff = b.mean() - a.mean()
    sp = np.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2))
    half = stats.t.ppf(0.975, a.size + b.size - 2) * sp * np.sqrt(1 / a.size + 1 / b.size)
    assert result.abs_diff == pytest.approx(diff)
    assert (result.ci_low, result.ci_high) == pytest.approx((diff - half, diff + half), rel=1e-9)
    assert result.ci_low > 0 and result.worse is True


def test_a_single_reported_value_has_no_repetitions():
    assert overhead.evidence(cell([40.0]), "cpu_pct").replicates == ()

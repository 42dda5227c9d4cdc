"""The series image (`/runs/{slug}/charts/series.svg`) draws repetitions as the run page does."""

from __future__ import annotations

import math

from benchtrail.sharing.charts import _break_at_gaps


def test_a_line_breaks_where_the_next_point_is_more_than_one_interval_later():
    # Two repetitions of 3 s at 1 s intervals, the second 7 s after the first (the other variant ran between).
    x, y = _break_at_gaps([0, 1, 2, 7, 8, 9], [10, 11, 12, 20, 21, 22], 1.0)
    assert x == [0, 1, 2, 4.5, 7, 8, 9]
    assert y[:3] == [10, 11, 12] and math.isnan(y[3]) and y[4:] == [20, 21, 22]


def test_a_continuous_line_or_one_without_an_interval_is_left_as_it_is():
    assert _break_at_gaps([0, 1, 2], [1, 2, 3], 1.0) == ([0, 1, 2], [1, 2, 3])
    assert _break_at_gaps([0, 10], [1, 2], 0) == ([0, 10], [1, 2])

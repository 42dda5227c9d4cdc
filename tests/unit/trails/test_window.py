"""Trail windows and thinning, against positions worked out by hand."""

from __future__ import annotations

import math

import pytest

from benchtrail.trails.window import window

SLUGS = [f"r{i}" for i in range(10)]


def test_the_default_window_is_the_newest_points():
    w = window(SLUGS, [float(i) for i in range(10)], before=None, limit=4, max_points=None)
    assert (w.start, w.stop, w.kept, w.total, w.downsampled) == (6, 10, [6, 7, 8, 9], 10, False)


def test_before_pages_back_to_the_first_point():
    w = window(SLUGS, [0.0] * 10, before="r6", limit=4, max_points=None)
    assert (w.start, w.stop, w.kept) == (2, 6, [2, 3, 4, 5])
    w = window(SLUGS, [0.0] * 10, before="r2", limit=4, max_points=None)
    assert (w.start, w.stop, w.kept) == (0, 2, [0, 1])


def test_an_unknown_run_is_refused():
    with pytest.raises(ValueError):
        window(SLUGS, [0.0] * 10, before="nope", limit=4, max_points=None)


def test_thinning_keeps_extremes_change_points_and_invalid_points():
    values = [5.0] * 100
    values[13] = 50.0          # a spike
    values[71] = -7.0          # a dip
    values[40] = math.nan      # an invalid run
    w = window([f"r{i}" for i in range(100)], values, before=None, limit=100, max_points=12, keep=[55])
    assert w.downsampled and len(w.kept) <= 12
    assert {0, 13, 40, 55, 71, 99} <= set(w.kept)
    assert w.kept == sorted(w.kept)

"""The x-axis order as bytes, annotations resolved in a window, and the review of a window: open
alerts as boundaries that the evidence must keep supporting."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import numpy as np
import pytest

from benchtrail.analysis import Settings
from benchtrail.trails import history

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _versions(rng: random.Random) -> list[str | None]:
    words = ["", "-rc1", "-rc2", "-SNAPSHOT", "-beta", ".RELEASE", "-alpha.3", "+build5", "-m1", "-rc.10"]
    out: list[str | None] = []
    for _ in range(400):
        kind = rng.random()
        if kind < 0.1:
            out.append(None)
        elif kind < 0.15:
            out.append(f"{rng.randint(0, 3)}.{rng.randint(0, 12)}.x")
        elif kind < 0.2:
            out.append(f"{rng.getrandbits(40):010x}")  # a commit hash: not a version
        else:
            parts = [str(rng.randint(0, 30)) for _ in range(rng.randint(1, 4))]
            out.append(("v" if rng.random() < 0.1 else "") + ".".join(parts) + rng.choice(words))
    return out


def test_order_bytes_sort_exactly_like_the_python_key():
    rng = random.Random(5)
    points = []
    for i, v in enumerate(_versions(rng)):
        when = T0 + timedelta(seconds=rng.randint(-10**8, 10**8)) if rng.random() < 0.95 else None
        points.append(history.Point(run_id=rng.randint(1, 10**7), slug=f"r{i}", agent_version=v, commit=None,
                                    created_at=when or T0, started_at=when, is_valid=True, value=0.0))
    by_tuple = sorted(points, key=lambda p: p.order_key)
    by_bytes = sorted(points, key=lambda p: p.key)
    assert [id(p) for p in by_tuple] == [id(p) for p in by_bytes]
    # and pairwise, including equal versions ordered by time then run id
    for a, b in zip(by_bytes, by_bytes[1:]):
        assert (a.order_key < b.order_key) == (a.key < b.key)


def test_a_window_resolves_a_version_annotation_like_the_whole_trail():
    pts = [history.Point(i, f"r{i}", v, None, T0, T0 + timedelta(hours=i), True, 1.0)
           for i, v in enumerate(["1.0", "1.1", "1.1", "1.2", "1.2"])]
    ann = [SimpleNamespace(agent_version="1.2", at=None), SimpleNamespace(agent_version="1.1", at=None)]
    assert history.known_indices(pts, ann, ()) == [1, 3]
    # a window starting inside version 1.1: its first point is not the first of 1.1
    assert history.known_indices(pts[2:], ann, (), before=pts[1]) == [1]
    at = [SimpleNamespace(agent_version=None, at=T0 + timedelta(hours=2, minutes=30))]
    assert history.known_indices(pts, at, ()) == [3]
    assert history.known_indices(pts, [], {4}) == [4]


def _points(values: np.ndarray) -> list[history.Point]:
    return [history.Point(i + 1, f"r{i}", f"1.{i}.0", None, T0, None, True, float(v)) for i, v in enumerate(values)]


def test_an_alert_raised_on_a_trail_with_holes_is_not_supported_once_the_holes_fill():
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.normal(100, 1, 60), rng.normal(110, 1, 40)])  # the step starts at 60
    s = Settings(direction="lower", min_magnitude_pct=1.0)
    # Raised at 64 while 60..63 were missing; with them back the change is at 60.
    rv = history.review(_points(values), s, [], [history.Tentative(7, 64, "regression")], (0, 99))
    assert [(cp.index, cp.direction) for cp in rv.detected] == [(60, "regression")]
    assert rv.supported == {} and set(rv.unsupported) == {7}
    lo, hi = rv.unsupported[7]
    assert lo < 64 < hi == 99  # judged between its neighbouring change points (or the window's ends)


def test_an_alert_a_point_or_two_off_is_supported_and_moved_and_noise_is_not():
    rng = np.random.default_rng(4)
    values = np.concatenate([rng.normal(100, 1, 50), rng.normal(108, 1, 50)])
    s = Settings(direction="lower", min_magnitude_pct=1.0)
    rv = history.review(_points(values), s, [], [history.Tentative(1, 52, "regression"),
                                                 history.Tentative(2, 20, "improvement")], (0, 99))
    assert set(rv.supported) == {1} and rv.supported[1].index == 50
    assert rv.supported[1].after_mean == pytest.approx(values[50:].mean(), rel=1e-12)
    assert rv.supported[1].before_mean == pytest.approx(values[:50].mean(), rel=1e-12)
    assert set(rv.unsupported) == {2} and rv.detected == []


def test_open_alerts_are_boundaries_so_a_short_staircase_keeps_both_steps():
    # 5% then +10 points at 4 and at 8, as in the webhook test: without the first alert as a
    # boundary the detector sees a ramp and finds neither step.
    rng = np.random.default_rng(7)
    ref = 2.0 * (1 + rng.normal(0, 0.003, 12))
    added = np.array([5.0 + 10.0 * sum(i >= s for s in (4, 8)) for i in range(12)])
    agent = np.round(ref * (1 + (added + rng.normal(0, 0.3, 12)) / 100), 4)
    s = Settings(direction="lower", min_magnitude_pct=1.0)
    pts = _points(agent[:11])
    assert history.review(pts, s, [], [], (0, 10)).detected == []
    rv = history.review(pts, s, [], [history.Tentative(1, 4, "regression")], (0, 10))
    assert [cp.index for cp in rv.detected] == [8] and set(rv.supported) == {1}
    assert rv.detected[0].before_mean == pytest.approx(agent[4:8].mean(), rel=1e-12)

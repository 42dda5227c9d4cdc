"""Ingest's validity checks against hand-computed expectations, on files parsed by the real parser."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from benchtrail.ingest import histogram
from benchtrail.ingest import validity
from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import parse_file
from tests.support.validity_jtl import plateau_jtl, stalled_jtl


def _throughput(path: Path, warmup_s: float = 0):
    result = build_cells(parse_file(path), warmup_s=warmup_s)
    [series] = [s for s in result.series if s.metric == "throughput" and s.scenario is None]
    return series, result


def test_a_gap_of_four_seconds_is_a_stall(tmp_path: Path) -> None:
    series, result = _throughput(stalled_jtl(tmp_path / "gap.jtl"))
    assert result.interval_ms == 1000
    found = validity.stall(series.t_ms, series.values, result.interval_ms, variant="agent", load="10 threads")
    # Hand count: samples start at T0+300 ms every 5 ms until T0+20295 ms, so intervals 0 and 20 are
    # partial and 1..19 are whole (19 of them) at 200 req/s; intervals 8, 9, 10, 11 have no sample.
    assert found is not None and found.ok is False and found.severity == "error"
    assert "fell to 0.0 req/s (0% of the median 200.0 req/s) for 4 s (seconds 8–12 of the load)" in found.detail
    assert "4 of 19 intervals under 20%, 4 with no sample at all" in found.detail
    assert found.row()["source"] == "ingest" and not validity.is_valid([found.row()])


def test_a_dip_to_one_percent_is_a_stall_and_a_steady_load_is_not(tmp_path: Path) -> None:
    path = stalled_jtl(tmp_path / "steady.jtl", gap=None)
    series, result = _throughput(path)
    ok = validity.stall(series.t_ms, series.values, result.interval_ms)
    assert ok is not None and ok.ok, ok
    # keep 2 of the 200 samples of second 5 (1% of the median)
    values = list(series.values)
    values[series.t_ms.index(1_700_000_005_000)] = 2.0
    found = validity.stall(series.t_ms, values, result.interval_ms)
    assert found is not None and not found.ok
    assert "fell to 2.0 req/s (1% of the median 200.0 req/s) for 1 s (seconds 5–6" in found.detail


def test_the_stall_inside_warm_up_is_not_judged(tmp_path: Path) -> None:
    series, result = _throughput(stalled_jtl(tmp_path / "gap.jtl", gap=(2_000, 4_000)))
    assert not validity.stall(series.t_ms, series.values, 1000).ok
    judged = validity.stall(series.t_ms, series.values, 1000, warmup_s=5)
    assert judged is not None and judged.ok


def test_sparse_loads_are_not_judged() -> None:
    # 3 samples per second: an empty second is chance (Poisson(3) = 0 has p = 5%), not a stall
    t = [1_700_000_000_000 + 1000 * i for i in range(30)]
    assert validity.stall(t, [3.0] * 10 + [0.0] + [3.0] * 19, 1000) is None


def test_a_40_ms_plateau_with_a_fast_minimum_is_the_delayed_ack_warning(tmp_path: Path) -> None:
    result = build_cells(parse_file(plateau_jtl(tmp_path / "plateau.jtl")))
    [cell] = [c for c in result.cells if c.scenario is not None]
    values = {**cell.stats, "histogram": cell.histogram}
    found = validity.delayed_ack(values, variant="baseline", scenario="vets", load="10 threads")
    # 900 of 1000 samples at 40..45 ms, the other 100 at 1 ms
    assert found is not None and found.severity == "warning" and not found.ok
    assert "90% of the latencies sit on a plateau at 38–50 ms while the fastest took 1.00 ms" in found.detail
    assert "sun.net.httpserver.nodelay=true" in found.detail
    assert validity.is_valid([found.row()])   # a warning leaves the run valid


def test_no_delayed_ack_warning_for_a_slow_service_or_a_fast_one() -> None:
    rng = np.random.default_rng(7)
    for latencies_us, low_ms in ((rng.integers(38_000, 50_000, 1000), 38.0),      # slow but never fast
                                 (rng.integers(500, 2_000, 1000), 0.5)):          # fast service
        h = histogram.new_histogram()
        values, counts = np.unique(latencies_us, return_counts=True)
        histogram.record_counts(h, values, counts)
        cell = {"histogram": histogram.encode(h), "latency_min": low_ms, "count": 1000}
        assert validity.delayed_ack(cell, variant="v", scenario="s", load=None) is None
        share = float(np.mean((latencies_us >= 38_000) & (latencies_us <= 50_000)))
        assert math.isclose(validity.plateau_share(cell["histogram"]), share, abs_tol=0.01)


def test_too_few_samples_for_p999_from_500() -> None:
    cells = [("agent", "vets", "10 threads", {"histogram": "x", "count": 500}),
             ("baseline", "vets", "10 threads", {"histogram": "x", "count": 20_000})]
    found = validity.too_few_samples(cells, [("latency_p75", 75.0), ("latency_p999", 99.9)])
    # p75 needs ceil(10 / 0.25) = 40 samples; p99.9 needs ceil(10 / 0.001) = 10,000
    assert [f.check for f in found] == ["samples for latency_p999"]
    [f] = found
    assert f.severity == "warning" and not f.ok
    assert "needs at least 10,000 samples" in f.detail and "1 of 2 cells" in f.detail
    assert "agent / vets / 10 threads with 500" in f.detail and "only 0 samples lie above latency_p999" in f.detail
    assert validity.needed_samples(99.0) == 1000 and validity.needed_samples(75.0) == 40


def test_too_few_samples_counts_the_smallest_repetition() -> None:
    cell = {"histogram": "x", "count": 3000,
            "extra": {"repetitions": [{"count": 1500}, {"count": 900}, {"count": 600}]}}
    [f] = validity.too_few_samples([("agent", "vets", None, cell)], [("latency_p99", 99.0)])
    assert "fewer per repetition" in f.detail and "with 600" in f.detail


def test_the_recording_step_is_the_greatest_common_divisor_of_the_latencies() -> None:
    assert validity.latency_step_us([0, 1000, 3000, 12000, 45000]) == 1000   # JMeter: whole ms, 0 included
    assert validity.latency_step_us([200, 300, 1100, 300]) == 100            # hey CSV: 0.1 ms
    assert validity.latency_step_us([1000, 1001]) == 1                       # µs times
    # No two values one step apart: the step is not seen (3 and 12 ms are not "steps of 3 ms").
    assert validity.latency_step_us([3000, 12000, 45000]) is None
    assert validity.latency_step_us([0, 0]) is None and validity.latency_step_us([]) is None


def test_a_percentile_of_few_recording_steps_is_a_resolution_warning() -> None:
    cells = [("agent", "vets", "1 connection", {"latency_p75": 0.4, "latency_p99": 1.7}),
             ("baseline", "vets", "1 connection", {"latency_p75": 0.3, "latency_p99": 0.6}),
             ("baseline", "vets", "50 threads", {"latency_p75": 25.0, "latency_p99": 60.0})]
    steps = {("agent", "1 connection"): 100, ("baseline", "1 connection"): 100, ("baseline", "50 threads"): 1000}
    found = validity.coarse_latency(cells, [("latency_p75", 75.0), ("latency_p99", 99.0)], steps)
    # p75: 4 and 3 steps of 0.1 ms are under 20; 25 steps of 1 ms are not. p99: 17 and 6 steps.
    assert [f.check for f in found] == ["resolution of latency_p75", "resolution of latency_p99"]
    p75, p99 = found
    assert p75.severity == "warning" and not p75.ok
    assert "steps of 0.1 ms" in p75.detail and "2 of 3 cells" in p75.detail
    assert "baseline / vets / 1 connection at 0.3 ms (3 steps)" in p75.detail and "jumps of 33%" in p75.detail
    assert "2 of 3 cells" in p99.detail and "at 0.6 ms (6 steps)" in p99.detail
    # Without a known step (µs-precise tools, reported results) nothing is said.
    assert validity.coarse_latency(cells, [("latency_p75", 75.0)], {}) == []

"""build_cells and the histogram helpers, against numpy on the same values."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from benchtrail.ingest import histogram
from benchtrail.ingest.cells import build_cells, by_load_key, choose_interval_s
from benchtrail.ingest.model import SAMPLE_SCHEMA, LoadSpec, ParsedFile, ReportedCell
from tests.support.series import throughput

from tests.support.oracle import nearest_rank


def _parsed(start_ms, latency_us, success=None, scenario=None, tx=None, load="threads:5"):
    n = len(start_ms)
    df = pl.DataFrame({
        "scenario": scenario or ["s"] * n, "load_key": [load] * n, "start_ms": start_ms,
        "latency_us": latency_us, "success": success or [True] * n, "bytes": [0] * n,
        "is_transaction": tx or [False] * n,
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="t", format="t", samples=df, loads={load: LoadSpec("threads", 5.0)})


def test_vectorised_recording_equals_record_value() -> None:
    rng = np.random.default_rng(7)
    values = np.unique(np.concatenate([rng.integers(0, 3000, 500),
                                       rng.integers(0, histogram.HIGHEST_US, 3000)]))
    counts = rng.integers(1, 40, len(values))
    fast = histogram.new_histogram()
    histogram.record_counts(fast, values, counts)
    slow = histogram.new_histogram()
    for v, c in zip(values.tolist(), counts.tolist(), strict=True):
        assert slow.record_value(v, c)
    assert fast.encode() == slow.encode()
    assert (fast.get_total_count(), fast.get_min_value(), fast.get_max_value()) == \
           (slow.get_total_count(), slow.get_min_value(), slow.get_max_value())


def test_percentiles_within_hdr_precision_of_nearest_rank() -> None:
    rng = np.random.default_rng(3)
    lat = np.round(rng.lognormal(np.log(30_000), 0.8, 50_000)).astype(np.int64)  # µs
    start = 1_700_000_000_000 + np.sort(rng.integers(0, 120_000, lat.size))
    cell = next(c for c in build_cells(_parsed(start.tolist(), lat.tolist())).cells if c.scenario is None)
    for name, p in (("p50", 50), ("p75", 75), ("p90", 90), ("p95", 95), ("p99", 99), ("p999", 99.9)):
        exact = nearest_rank(lat, p) / 1000.0
        assert abs(cell.stats[f"latency_{name}"] - exact) <= exact * 0.001, name
    assert cell.stats["latency_mean"] == pytest.approx(lat.mean() / 1000.0, rel=1e-12)
    # the stored histogram decodes to the same distribution and any percentile can be read back
    assert histogram.decode(cell.histogram).get_total_count() == lat.size
    exact_p42 = nearest_rank(lat, 42) / 1000.0
    assert abs(histogram.percentile_ms(cell.histogram, 42) - exact_p42) <= exact_p42 * 0.001


def test_merge_of_stored_histograms_equals_histogram_of_all_values() -> None:
    rng = np.random.default_rng(11)
    a = rng.integers(1000, 90_000, 4000)
    b = rng.integers(5000, 200_000, 6000)
    ha = build_cells(_parsed([0] * a.size, a.tolist())).cells[0].histogram
    hb = build_cells(_parsed([0] * b.size, b.tolist())).cells[0].histogram
    merged = histogram.merge([ha, hb])
    both = np.concatenate([a, b])
    assert histogram.decode(merged).get_total_count() == both.size
    for p in (50, 90, 99):
        exact = nearest_rank(both, p) / 1000.0
        assert abs(histogram.percentile_ms(merged, p) - exact) <= exact * 0.001


def test_warmup_excluded_from_cells_but_kept_in_series() -> None:
    start = [1_700_000_000_000 + i * 100 for i in range(600)]   # 60 s at 10 req/s
    lat = [50_000 if i < 100 else 10_000 for i in range(600)]    # slow first 10 s
    result = build_cells(_parsed(start, lat), warmup_s=10, interval_s=5)
    cell = next(c for c in result.cells if c.scenario is None)
    assert result.warmup_excluded == 100
    assert cell.stats["count"] == 500
    assert cell.stats["latency_max"] == 10.0
    p50 = next(s for s in result.series if s.metric == "latency_p50" and s.scenario is None)
    assert p50.values[0] == 50.0 and p50.values[-1] == 10.0
    tput = next(s for s in result.series if s.metric == "throughput" and s.scenario is None)
    # 10 req/s in every interval, the last one too: it holds 50 requests over the 4.91 s the load ran in it
    # (to the last end, 59.9 s + 10 ms), not 50 over 5 s.
    assert tput.values == pytest.approx([10.0] * 11 + [50 / 4.91], rel=1e-12)
    assert tput.values == pytest.approx(throughput([(np.array(start), np.array(start) + 10)], 5_000)[1], rel=1e-12)


def test_the_longest_warmup_an_upload_may_state_leaves_every_sample_out_of_cells() -> None:
    from benchtrail.uploads.schemas import MAX_WARMUP_S

    start = [1_700_000_000_000 + i * 100 for i in range(600)]
    result = build_cells(_parsed(start, [10_000] * 600), warmup_s=MAX_WARMUP_S, interval_s=5)
    assert result.warmup_excluded == 600
    assert all(not c.stats.get("count") for c in result.cells)


def test_series_buckets_are_epoch_aligned_and_exact() -> None:
    rng = np.random.default_rng(5)
    start = np.sort(rng.integers(1_700_000_003_000, 1_700_000_093_000, 3000))
    lat = rng.integers(1_000, 100_000, 3000)
    ok = rng.random(3000) > 0.1
    result = build_cells(_parsed(start.tolist(), lat.tolist(), ok.tolist()), interval_s=10)
    series = {s.metric: s for s in result.series if s.scenario is None}
    t = series["errors"].t_ms
    assert all(x % 10_000 == 0 for x in t)
    for i, bucket in enumerate(t):
        mask = (start >= bucket) & (start < bucket + 10_000)
        assert series["errors"].values[i] == (~ok[mask]).sum()
        assert series["latency_p95"].values[i] == nearest_rank(lat[mask], 95) / 1000.0
    # Throughput: the first and last interval over the part of them the load ran (it starts at 3.x s).
    expected_t, expected = throughput([(start, start + lat / 1000.0)], 10_000)
    assert series["throughput"].t_ms == expected_t and series["throughput"].values == pytest.approx(expected, rel=1e-12)
    assert expected[0] > (start < t[0] + 10_000).sum() / 10.0       # no dip where the load started


def test_transactions_have_own_cells_and_never_enter_totals() -> None:
    p = _parsed([0, 1, 2, 3], [1000, 2000, 3000, 9000], scenario=["a", "a", "b", "tx"],
                tx=[False, False, False, True])
    cells = {c.scenario: c for c in build_cells(p).cells}
    assert cells[None].stats["count"] == 3 and cells[None].stats["latency_max"] == 3.0
    assert cells["tx"].is_transaction and cells["tx"].stats["count"] == 1
    assert not cells["a"].is_transaction


def test_series_and_timelines_of_all_scenarios_leave_transactions_out() -> None:
    """Per interval, the "all scenarios" series and timeline count the samplers only (numpy), while the
    transaction's own series counts its rows."""
    rng = np.random.default_rng(9)
    n = 4000
    start = np.sort(rng.integers(1_700_000_000_000, 1_700_000_060_000, n))
    lat = rng.integers(1_000, 80_000, n)
    tx = rng.random(n) < 0.2
    lat[tx] += 100_000                     # a transaction spans its samplers: slower than any of them
    scenario = np.where(tx, "checkout", np.where(rng.random(n) < 0.5, "a", "b"))
    result = build_cells(_parsed(start.tolist(), lat.tolist(), scenario=scenario.tolist(), tx=tx.tolist()),
                         interval_s=5)
    series = {(s.scenario, s.metric): s for s in result.series}
    t = series[(None, "latency_p50")].t_ms
    expected_t, expected = throughput([(start[~tx], start[~tx] + lat[~tx] / 1000.0)], 5_000)
    assert series[(None, "throughput")].t_ms == expected_t
    assert series[(None, "throughput")].values == pytest.approx(expected, rel=1e-12)
    for i, bucket in enumerate(t):
        mask = (start >= bucket) & (start < bucket + 5_000)
        for p in (50, 99):
            assert series[(None, f"latency_p{p}")].values[i] == pytest.approx(
                nearest_rank(lat[mask & ~tx], p) / 1000.0, rel=1e-12), (bucket, p)
    checkout = series[("checkout", "throughput")]
    assert checkout.values == pytest.approx(throughput([(start[tx], start[tx] + lat[tx] / 1000.0)], 5_000)[1], rel=1e-12)
    total = next(c for c in result.cells if c.scenario is None)
    assert total.stats["count"] == (~tx).sum() and sum(total.timeline["count"]) == (~tx).sum()  # type: ignore[index]
    assert sum(total.timeline["sum"]) == lat[~tx].sum()  # type: ignore[index]


@pytest.mark.parametrize(("span", "interval"), [(10, 1), (200, 1), (201, 5), (1000, 5), (1800, 10),
                                                 (3000, 15), (6000, 30), (12000, 60), (36000, 300)])
def test_interval_choice(span: float, interval: int) -> None:
    assert choose_interval_s(span) == interval
    assert span / interval <= 200


def test_reported_cells_pass_through() -> None:
    cell = ReportedCell(scenario=None, stats={"throughput": 3.0})
    result = build_cells(ParsedFile(tool="hey", format="hey-text", reported=[cell]))
    assert result.reported == [cell] and result.cells == []


@pytest.mark.parametrize("values", [
    {"10": 5000, "20": 5000, "50": 5000},     # one value: a literal
    {"10": 5000, "20": 1000, "50": 5000},     # two
    {"10": 100, "20": 1000, "50": 5000},      # one per key
])
def test_a_value_per_load_key_is_the_mapping_of_each_rows_key(values: dict[str, int]) -> None:
    keys = ["50", "10", "20", "10", "50", "20", "20"]
    frame = pl.DataFrame({"load_key": keys}, schema={"load_key": pl.Categorical})
    assert frame.with_columns(by_load_key(values).alias("v"))["v"].to_list() == [values[k] for k in keys]

"""What ingest keeps per repetition for the A/B analysis, against numpy on the raw samples: each
repetition's exact statistics and histogram in execution order, the single repetition's timeline,
and merged cell numbers that stay exact over all samples."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from benchtrail.ingest import histogram
from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.model import SAMPLE_SCHEMA, LoadSpec, ParsedFile
from benchtrail.ingest.service import _values_of, combine

from tests.support.oracle import nearest_rank

LOAD = "threads:5"


def parsed(start_ms: np.ndarray, latency_us: np.ndarray, scenario: list[str] | None = None) -> ParsedFile:
    n = len(start_ms)
    df = pl.DataFrame({
        "scenario": scenario or ["s"] * n, "load_key": [LOAD] * n, "start_ms": start_ms,
        "latency_us": latency_us, "success": [True] * n, "bytes": [0] * n, "is_transaction": [False] * n,
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="t", format="t", samples=df, loads={LOAD: LoadSpec("threads", 5.0)})


def test_timeline_per_interval_equals_numpy() -> None:
    rng = np.random.default_rng(21)
    n = 12_000
    start = 1_700_000_000_000 + np.sort(rng.integers(0, 30_000, n))        # 30 s
    lat = np.round(rng.lognormal(np.log(8000), 0.5, n)).astype(np.int64)
    scen = rng.choice(["a", "b"], n).tolist()
    cells = build_cells(parsed(start, lat, scen)).cells
    for cell in cells:
        mask = np.ones(n, bool) if cell.scenario is None else np.array(scen) == cell.scenario
        s, x = start[mask], lat[mask]
        tl = cell.timeline
        assert tl is not None and tl["interval_ms"] == 200            # 30 s / 200 ms = 150 intervals
        t = s - s % 200
        keys = np.unique(t)
        assert tl["t_ms"] == keys.tolist()
        assert tl["count"] == [int(np.sum(t == k)) for k in keys]
        assert tl["sum"] == [int(x[t == k].sum()) for k in keys]
        for name, p in (("p50", 50), ("p75", 75), ("p99", 99), ("p999", 99.9)):
            thr = tl["thresholds"][name]
            assert thr == pytest.approx(cell.stats[f"latency_{name}"] * 1000)
            assert abs(thr - nearest_rank(x, p)) <= nearest_rank(x, p) * 0.001
            assert tl["at_or_below"][name] == [int(np.sum(x[t == k] <= thr)) for k in keys]


def test_timeline_leaves_out_warmup() -> None:
    start = 1_700_000_000_000 + np.arange(0, 40_000, 10)
    lat = np.full(start.size, 5000, dtype=np.int64)
    cell = build_cells(parsed(start, lat), warmup_s=10).cells[0]
    assert sum(cell.timeline["count"]) == int(np.sum(start >= start[0] + 10_000))
    assert min(cell.timeline["t_ms"]) >= start[0] + 10_000 - 200


def repetition_part(rng: np.random.Generator, position: int, scale: float = 1.0) -> tuple[dict, np.ndarray]:
    n = 5000
    start = 1_700_000_000_000 + position * 60_000 + np.sort(rng.integers(0, 20_000, n))
    lat = np.round(rng.lognormal(np.log(8000), 0.4, n) * scale).astype(np.int64)
    part = _values_of(build_cells(parsed(start, lat)).cells[0])
    part["position"] = position
    return part, lat


def test_combine_keeps_each_repetition_in_execution_order_and_merged_cell_exact() -> None:
    rng = np.random.default_rng(22)
    made = [repetition_part(rng, pos) for pos in (4, 0, 2)]        # arrive out of order
    cell = combine([p for p, _ in made])
    reps = cell["repetitions"]
    assert [r["position"] for r in reps] == [0, 2, 4]
    by_pos = {p["position"]: lat for p, lat in made}
    for r in reps:
        lat = by_pos[r["position"]]
        assert r["count"] == lat.size
        assert r["latency_mean"] == pytest.approx(lat.mean() / 1000, rel=1e-12)
        exact = nearest_rank(lat, 75) / 1000
        assert abs(r["latency_p75"] - exact) <= exact * 0.001
        h = histogram.decode(r["histogram"])
        assert h.get_total_count() == lat.size
        assert "timeline" not in r                       # only a single repetition keeps its timeline
    everything = np.concatenate([lat for _, lat in made])
    assert cell["count"] == everything.size
    assert cell["latency_mean"] == pytest.approx(everything.mean() / 1000, rel=1e-12)
    exact = nearest_rank(everything, 99) / 1000
    assert abs(cell["latency_p99"] - exact) <= exact * 0.001
    assert "timeline" not in cell and "position" not in cell


def test_single_repetition_keeps_its_timeline_and_the_cell_has_no_extra_keys() -> None:
    rng = np.random.default_rng(23)
    part, lat = repetition_part(rng, 3)
    cell = combine([part])
    assert len(cell["repetitions"]) == 1
    rep = cell["repetitions"][0]
    assert rep["position"] == 3 and sum(rep["timeline"]["count"]) == lat.size
    assert "histogram" not in rep and cell["histogram"] == part["histogram"]     # not stored twice
    assert "timeline" not in cell and "position" not in cell
    # A resource file's reported numbers for the same cell do not become a repetition.
    cell = combine([part, {"cpu_pct": 50.0, "extra": {}, "is_transaction": False, "position": 9}])
    assert len(cell["repetitions"]) == 1 and cell["cpu_pct"] == 50.0 and "position" not in cell

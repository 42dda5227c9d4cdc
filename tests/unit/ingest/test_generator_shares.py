"""A run over several load generators: the shares' outputs of one step merge into one cell whose
numbers are those of the union of their samples (numpy), never averages of the shares' percentiles."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.model import SAMPLE_SCHEMA, LoadSpec, ParsedFile
from benchtrail.ingest.service import RunWriter, combine, merge_shares

from tests.support.oracle import nearest_rank

LOAD = "concurrency:8"
T0 = 1_700_000_000_000


def parsed(start_ms: np.ndarray, latency_us: np.ndarray, success: np.ndarray) -> ParsedFile:
    n = len(start_ms)
    df = pl.DataFrame({
        "scenario": ["s"] * n, "load_key": [LOAD] * n, "start_ms": start_ms, "latency_us": latency_us,
        "success": success, "bytes": [0] * n, "is_transaction": [False] * n,
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="t", format="t", samples=df, loads={LOAD: LoadSpec("concurrency", 8.0)})


def share_samples(rng: np.random.Generator, n: int, offset_ms: int, scale_us: float):
    start = T0 + offset_ms + np.sort(rng.integers(0, 10_000, n))
    lat = np.round(rng.lognormal(np.log(scale_us), 0.6, n)).astype(np.int64) + 1
    ok = rng.random(n) > 0.02
    return start, lat, ok


def test_two_shares_of_each_repetition_merge_to_the_union_of_their_samples() -> None:
    rng = np.random.default_rng(7)
    writer = RunWriter(None, SimpleNamespace(meta={"generators": 2}), "")  # type: ignore[arg-type]
    union: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    # two repetitions (positions 0 and 1), each run by share 0 and share 1 at once; the second share is
    # slower and starts 300 ms later, so averaging the shares' percentiles would be visibly wrong
    for position in (0, 1):
        for share, (n, offset, scale) in enumerate(((4000, 0, 4000.0), (2500, 300, 9000.0))):
            start, lat, ok = share_samples(rng, n, offset + position * 20_000, scale)
            union.setdefault(position, []).append((start, lat, ok))
            for cell in build_cells(parsed(start, lat, ok)).cells:
                writer.add_cell("v", cell, position, share)
    pending = writer.cells[("v", "s", LOAD, "", "")]
    parts = merge_shares(pending.parts)
    assert len(parts) == 2 and all("share" not in p and "window" not in p for p in parts)
    for part in parts:
        start = np.concatenate([u[0] for u in union[part["position"]]])
        lat = np.concatenate([u[1] for u in union[part["position"]]])
        ok = np.concatenate([u[2] for u in union[part["position"]]])
        end_ms = start + lat / 1000.0
        assert part["count"] == lat.size and part["errors"] == int((~ok).sum())
        assert part["latency_min"] == lat.min() / 1000 and part["latency_max"] == lat.max() / 1000
        assert part["latency_mean"] == pytest.approx(lat.mean() / 1000, rel=1e-12)
        assert part["duration_s"] == pytest.approx((end_ms.max() - start.min()) / 1000, rel=1e-12)
        assert part["throughput"] == pytest.approx(lat.size / ((end_ms.max() - start.min()) / 1000), rel=1e-12)
        for name, p in (("p50", 50), ("p75", 75), ("p90", 90), ("p99", 99), ("p999", 99.9)):
            exact = nearest_rank(lat, p) / 1000
            assert abs(part[f"latency_{name}"] - exact) <= exact * 0.001, name
    # the cell over both repetitions: still the union of every sample, repetitions kept in order
    cell = combine(parts)
    lat = np.concatenate([u[1] for pos in (0, 1) for u in union[pos]])
    assert cell["count"] == lat.size and [r["position"] for r in cell["repetitions"]] == [0, 1]
    for name, p in (("p50", 50), ("p99", 99)):
        exact = nearest_rank(lat, p) / 1000
        assert abs(cell[f"latency_{name}"] - exact) <= exact * 0.001
    # averaging the shares' own p99 would be far off the union's: the test can tell the two apart
    shares_p99 = [nearest_rank(u[1], 99) / 1000 for u in union[0]]
    assert abs(np.mean(shares_p99) - parts[0]["latency_p99"]) > 0.05 * parts[0]["latency_p99"]


def test_parts_without_shares_are_untouched() -> None:
    parts = [{"histogram": "x", "count": 1, "position": 0}, {"cpu_pct": 3.0, "extra": {}, "position": 0}]
    assert merge_shares(parts) is parts

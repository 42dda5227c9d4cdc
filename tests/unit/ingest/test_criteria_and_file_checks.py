"""Ingest's criteria and per-file checks (what the runner used to judge), on files written here, with
expected values by hand arithmetic and numpy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchtrail.ingest import validity
from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.criteria import CellView, judge, passed
from benchtrail.ingest.detect import parse_file
from benchtrail.ingest.model import LoadSpec, ParseOptions
from benchtrail.ingest.service import ALL_SCENARIOS, measured_file
from benchtrail.plans.model import Criterion


def _hey_csv(path: Path, latencies_s: list[float], offsets_s: list[float], codes: list[int]) -> Path:
    lines = ["response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"]
    lines += [f"{lat:.4f},0,0,0,{lat:.4f},0,{code},{off:.4f}" for lat, off, code in zip(latencies_s, offsets_s, codes)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_hey_rows_missing_from_a_known_request_count_are_failed_requests(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    lat = list(rng.uniform(0.001, 0.02, 97))
    off = [i * 0.01 for i in range(97)]
    codes = [200] * 95 + [500, 503]
    load = LoadSpec("concurrency", 4, requests=100)   # 100 sent, 97 rows: 3 got no response
    parsed = parse_file(_hey_csv(tmp_path / "a.csv", lat, off, codes), format="hey-csv",
                        options=ParseOptions(load=load, scenario="ok"))
    found = measured_file(parsed, variant="a", scenario="ok", fmt="hey-csv")
    [(facts, key)] = found.facts
    assert key == load.key and facts.count == 97 and facts.errors == 2 and facts.unanswered == 3
    # 96 starts 10 ms apart: (n - 1) / (last - first) = 96 / 0.96 s
    assert facts.arrival_rate == pytest.approx(96 / 0.96)
    checks = {f.check: f for f in validity.file_checks(facts, requested_rate=100.0)}
    assert checks["errors a/ok"].ok is False
    assert checks["errors a/ok"].detail.startswith("5 of 100 failed (5.00%, limit 1%)")
    assert checks["rate a/ok"].ok is True and "achieved 100.0 req/s vs requested 100" in checks["rate a/ok"].detail
    assert found.unanswered[("a", ALL_SCENARIOS, load.key)] == 3


def test_k6_dropped_iterations_fail_a_check(tmp_path: Path) -> None:
    path = tmp_path / "k6.json"
    points = [{"type": "Point", "metric": "http_req_duration",
               "data": {"time": f"2024-01-01T00:00:0{i}.000000000Z", "value": 2.0,
                        "tags": {"name": "ok", "status": "200", "expected_response": "true"}}} for i in range(5)]
    points += [{"type": "Point", "metric": "dropped_iterations", "data": {"time": "2024-01-01T00:00:04Z", "value": 1}}
               for _ in range(7)]
    path.write_text("\n".join(json.dumps(p) for p in points) + "\n")
    parsed = parse_file(path, format="k6-json", options=ParseOptions(load=LoadSpec("rate", 1.0, duration_s=5)))
    assert parsed.meta["dropped_iterations"] == 7
    [(facts, _)] = measured_file(parsed, variant="a", scenario=None, fmt="k6-json").facts
    checks = {f.check: f for f in validity.file_checks(facts, requested_rate=1.0)}
    assert checks["dropped a"].ok is False and checks["dropped a"].detail.startswith("7 arrivals not sent")
    assert checks["rate a"].ok is True  # 5 starts one second apart: 4 / 4 s = 1 req/s


def test_load_generator_saturation() -> None:
    assert validity.load_generator(1.79, 1.0, 2, 95).ok is True        # 89.5 % of 2 cores
    busy = validity.load_generator(1.8, 1.0, 2, 99)                     # 90 %
    assert busy.ok is False and "saturated" in busy.detail and "90% of 2 cores" in busy.detail


def test_criteria_read_the_cells_percentiles_resources_and_overheads(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    cells: dict[tuple[str, str, str], CellView] = {}
    raw: dict[str, np.ndarray] = {}
    load = LoadSpec("concurrency", 2, requests=400)
    for variant, scale in (("ref", 0.005), ("agent", 0.008)):
        lat = rng.exponential(scale, 400) + 0.001
        raw[variant] = np.round(lat * 10_000) / 10   # hey keeps 0.1 ms
        parsed = parse_file(_hey_csv(tmp_path / f"{variant}.csv", list(lat), [i * 0.005 for i in range(400)],
                                     [200] * 400), format="hey-csv", options=ParseOptions(load=load, scenario="ok"))
        [cell] = [c for c in build_cells(parsed).cells if c.scenario is None]
        values = {**cell.stats, "cpu_pct": 40.0 if variant == "ref" else 55.0}
        cells[(variant, ALL_SCENARIOS, load.key)] = CellView(values, load.label, 0, (399 / 1.995,))
    criteria = [Criterion(metric="latency_p90", op="<", value=1000),
                Criterion(metric="latency_p90", op="<", value=5, overhead=True),
                Criterion(metric="cpu_pct", op="<", value=50, variant="agent"),
                Criterion(metric="achieved_rate", op=">=", value=200),
                Criterion(metric="heap_mb", op="<", value=1)]
    rows = judge(criteria, cells, reference="ref")
    p90 = {v: float(np.percentile(raw[v], 90, method="inverted_cdf")) for v in raw}
    [r_ref, r_agent] = [r for r in rows if r["criterion"] == "latency_p90 < 1000"]
    assert (r_ref["variant"], r_agent["variant"]) == ("ref", "agent") and r_ref["scenario"] is None
    assert r_ref["observed"] == pytest.approx(p90["ref"], rel=1e-3) and r_ref["ok"] is True
    [over] = [r for r in rows if r["criterion"].startswith("overhead of")]
    assert over["variant"] == "agent"
    assert over["observed"] == pytest.approx(p90["agent"] - p90["ref"], rel=1e-2, abs=2e-3)
    [cpu] = [r for r in rows if r["criterion"] == "cpu_pct < 50"]
    assert cpu["observed"] == 55.0 and cpu["ok"] is False and "FAIL" in cpu["detail"]
    rates = [r for r in rows if r["criterion"] == "achieved_rate >= 200"]
    assert all(r["observed"] == pytest.approx(200.0) and r["ok"] for r in rates)
    assert all(r["ok"] is None and r["detail"] == "not measured" for r in rows if r["criterion"].startswith("heap"))
    assert passed(rows) is False
    assert passed([r for r in rows if r["criterion"] != "cpu_pct < 50"]) is True

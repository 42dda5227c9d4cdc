"""Locust, k6 and Gatling parsers against independent reads of the same files."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime

import numpy as np
import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import parse_file
from benchtrail.ingest.model import LoadSpec, ParseError, ParseOptions

from tests.support.corpus import LOCAL, real
from tests.support.oracle import nearest_rank


def _csv(path, encoding="utf-8"):
    return list(csv.DictReader(io.StringIO(path.read_bytes().decode(encoding).replace("\r\r\n", "\n"))))


@pytest.mark.parametrize(("prefix", "encoding"), [
    ("isNeil_neuro_locust", "utf-8"), ("veroliut_loadTestRetailDemoStore_results", "utf-8"),
    ("AbhishekkumarReddy_odoo-locust_results", "utf-8"), ("zhajiangmian2342_20200823_locust", "gbk")])
def test_locust_stats(prefix: str, encoding: str) -> None:
    path = real(f"locust-csv/{prefix}_stats.csv")
    rows = _csv(path, encoding)
    cells = parse_file(path, options=ParseOptions(load=LoadSpec("concurrency", 10.0))).reported
    assert len(cells) == len(rows)
    for cell, row in zip(cells, rows, strict=True):
        aggregated = row["Name"] == "Aggregated"
        assert cell.scenario == (None if aggregated else f"{row['Type']} {row['Name']}")
        assert cell.stats["count"] == float(row["Request Count"])
        assert cell.stats["errors"] == float(row["Failure Count"])
        assert cell.stats["latency_mean"] == float(row["Average Response Time"])
        assert cell.stats["latency_p50"] == float(row["Median Response Time"])
        if row["95%"] != "N/A":
            assert cell.stats["latency_p95"] == float(row["95%"])
        assert cell.stats["throughput"] == float(row["Requests/s"])
        assert cell.load.key == "concurrency:10"
    if encoding == "gbk":
        assert cells[0].scenario == "GET get接口"


def test_locust_history_series() -> None:
    path = real("locust-csv/isNeil_neuro_locust_stats_history.csv")
    rows = _csv(path)
    parsed = parse_file(path)
    tput = next(s for s in parsed.series if s.metric == "throughput" and s.scenario is None)
    by_ts = {int(r["Timestamp"]) * 1000: float(r["Requests/s"]) for r in rows}
    assert dict(zip(tput.t_ms, tput.values, strict=True)) == by_ts
    p95 = next(s for s in parsed.series if s.metric == "latency_p95")
    assert all(v == 2000.0 or v == 2100.0 for v in p95.values)
    assert parsed.meta["max_users"] == max(int(r["User Count"]) for r in rows)


def test_locust_history_quoted_crcrlf() -> None:
    parsed = parse_file(real("locust-csv/zhajiangmian2342_20200823_locust_stats_history.csv"))
    p50 = next(s for s in parsed.series if s.metric == "latency_p50")
    assert p50.t_ms == [1597569276000] and p50.values == [11.0]   # last row of the same second


def test_locust_json(write) -> None:
    entries = [
        {"name": "/a", "method": "GET", "last_request_timestamp": 1700000010.0, "start_time": 1700000000.0,
         "num_requests": 10, "num_none_requests": 0, "num_failures": 1, "total_response_time": 550.0,
         "max_response_time": 200.0, "min_response_time": 10.0, "total_content_length": 1000,
         "response_times": {"10": 2, "20": 3, "50": 3, "100": 1, "200": 1},
         "num_reqs_per_sec": {}, "num_fail_per_sec": {}},
        {"name": "/b", "method": "POST", "last_request_timestamp": 1700000012.0, "start_time": 1700000002.0,
         "num_requests": 4, "num_none_requests": 0, "num_failures": 0, "total_response_time": 120.0,
         "max_response_time": 40.0, "min_response_time": 20.0, "total_content_length": 10,
         "response_times": {"20": 2, "40": 2}, "num_reqs_per_sec": {}, "num_fail_per_sec": {}}]
    cells = parse_file(write("l.json", json.dumps(entries))).reported
    a, b, total = cells
    values_a = np.repeat([10, 20, 50, 100, 200], [2, 3, 3, 1, 1])
    assert a.scenario == "GET /a" and a.stats["latency_p75"] == nearest_rank(values_a, 75)
    assert a.stats["latency_mean"] == 55.0 and a.stats["throughput"] == 1.0
    assert total.scenario is None and total.stats["count"] == 14 and total.stats["errors"] == 1
    both = np.concatenate([values_a, np.repeat([20, 40], [2, 2])])
    assert total.stats["latency_p90"] == nearest_rank(both, 90)
    assert total.stats["duration_s"] == 12.0


def test_k6_handlesummary_values() -> None:
    path = real("k6-handlesummary-json/grafana_k6-example-circleci-orb_handleSummary.json")
    m = json.loads(path.read_text(encoding="utf-8"))["metrics"]
    [c] = parse_file(path).reported
    d = m["http_req_duration"]["values"]
    assert c.scenario is None
    assert (c.stats["latency_mean"], c.stats["latency_p50"], c.stats["latency_p95"]) == \
        (d["avg"], d["med"], d["p(95)"])
    assert c.stats["count"] == m["http_reqs"]["values"]["count"]
    assert c.stats["errors"] == m["http_req_failed"]["values"]["passes"]
    assert c.load == LoadSpec("concurrency", 5.0)
    assert c.params["threshold http_req_duration p(95)<500"] == "ok"


def test_k6_summary_export_browser_failed_rate() -> None:
    path = real("k6-summary-export/MM12583_K6_Script_Automated_Test_summary-export_browser.json")
    m = json.loads(path.read_text(encoding="utf-8"))["metrics"]
    [c] = parse_file(path).reported
    failed = m["browser_http_req_failed"]
    assert c.stats["count"] == failed["passes"] + failed["fails"]
    assert c.stats["errors"] == failed["passes"]         # "passes" = failed requests
    assert c.stats["latency_max"] == m["browser_http_req_duration"]["max"]


def test_k6_ndjson_samples() -> None:
    path = real("k6-json-output/KirillY_k6-load-template_k6-results.ndjson")
    points = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    dur = [p for p in points if p.get("type") == "Point" and p["metric"] == "http_req_duration"]
    parsed = parse_file(path)
    s = parsed.samples
    assert s.height == len(dur)  # type: ignore[union-attr]
    assert s["latency_us"].to_list() == [round(p["data"]["value"] * 1000) for p in dur]  # type: ignore[index]
    first = datetime.fromisoformat(dur[0]["data"]["time"][:26] + dur[0]["data"]["time"][-6:])
    assert s["start_ms"][0] == int(first.timestamp() * 1000) - round(dur[0]["data"]["value"])  # type: ignore[index]
    vus = max(p["data"]["value"] for p in points if p.get("type") == "Point" and p["metric"] == "vus")
    assert list(parsed.loads) == [f"concurrency:{int(vus)}"]
    all_cell = next(c for c in build_cells(parsed).cells if c.scenario is None)
    lat = np.array([p["data"]["value"] for p in dur])
    assert all_cell.stats["latency_mean"] == pytest.approx(np.round(lat * 1000).mean() / 1000, rel=1e-12)


def test_k6_csv_samples() -> None:
    path = real("k6-csv-output/taurus_k6_kpi.csv")
    rows = [r for r in _csv(path) if r["metric_name"] == "http_req_duration"]
    s = parse_file(path).samples
    assert s["latency_us"].to_list() == [round(float(r["metric_value"]) * 1000) for r in rows]  # type: ignore[index]
    assert s["success"].to_list() == [r["expected_response"] == "true" for r in rows]  # type: ignore[index]


def test_gatling_text_log() -> None:
    path = real("gatling-simulation-log/taurus_gatling-351-000_simulation.log")
    req = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()
           if line.startswith("REQUEST")]
    lat = np.array([int(f[4]) - int(f[3]) for f in req])
    cell = next(c for c in build_cells(parse_file(path)).cells if c.scenario == "request_1")
    assert cell.stats["count"] == len(req) == 220
    assert cell.stats["errors"] == sum(f[5] == "KO" for f in req)
    assert cell.stats["latency_mean"] == pytest.approx(lat.mean(), rel=1e-12)
    assert cell.stats["latency_p75"] == pytest.approx(nearest_rank(lat, 75), rel=1e-3)
    old = parse_file(real("gatling-simulation-log/taurus_gatling-331-000_simulation.log"))
    assert old.meta["gatling_version"] == "3.3.1" and old.samples.height == 100  # type: ignore[union-attr]


def test_gatling_binary_log_cut_off_names_the_byte(write) -> None:
    data = real("gatling-simulation-log/taurus_gatling-6-314_simulation.log").read_bytes()
    assert parse_file(real("gatling-simulation-log/taurus_gatling-6-314_simulation.log")).meta["gatling_version"] == "3.14.3"
    with pytest.raises(ParseError) as exc:
        parse_file(write("simulation.log", data[:-3]))
    assert "cut off" in exc.value.reason and f"at byte {len(data) - 4}" in exc.value.reason


def test_gatling_stats_json() -> None:
    path = LOCAL / "gatling_stats.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    cells = {c.scenario: c for c in parse_file(path).reported}
    assert set(cells) == {None, "Home", "Search"}
    search = doc["contents"]["req_search-2"]["stats"]
    assert cells["Search"].stats["errors"] == float(search["numberOfRequests"]["ko"])
    assert cells["Search"].stats["latency_p95"] == float(search["percentiles3"]["total"])
    assert cells[None].stats["count"] == 300.0

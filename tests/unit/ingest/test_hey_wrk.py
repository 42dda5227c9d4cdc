"""hey (text and CSV) and wrk: numbers as printed in the files, read independently."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import parse_file
from benchtrail.ingest.model import LoadSpec, ParseError, ParseOptions

from tests.support.corpus import real
from tests.support.oracle import nearest_rank


def _hey_oracle(text: str) -> dict[str, float]:
    def secs(key: str) -> float:
        return float(re.search(rf"{key}:\s+([\d.]+) secs", text)[1])  # type: ignore[index]
    codes = [(int(c), int(n)) for c, n in re.findall(r"\[(\d{3})\]\s+(\d+) responses", text)]
    errs = sum(int(n) for n in re.findall(r"^\s+\[(\d+)\]\s+(?!.*responses)", text, re.M))
    return {
        "duration_s": secs("Total"), "latency_max": secs("Slowest") * 1000,
        "latency_min": secs("Fastest") * 1000, "latency_mean": secs("Average") * 1000,
        "throughput": float(re.search(r"Requests/sec:\s+([\d.]+)", text)[1]),  # type: ignore[index]
        "latency_p75": float(re.search(r"75%+ in ([\d.]+) secs", text)[1]) * 1000,  # type: ignore[index]
        "count": sum(n for _, n in codes) + errs,
        "errors": sum(n for c, n in codes if c >= 400) + errs,
    }


@pytest.mark.parametrize("name", ["akhastaf_webserver_hey_5b486fa.log",
                                  "akhastaf_webserver_hey_errors_4bbd90b.log",
                                  "hnakamur_ats-nginx-bad-request_hey_0accfc5.log",
                                  "hnakamur_ats-nginx-bad-request_hey_eedd742.log"])
def test_hey_text_every_summary_number(name: str) -> None:
    path = real(f"hey-text/{name}")
    load = LoadSpec("concurrency", 100.0, requests=90000)
    [cell] = parse_file(path, options=ParseOptions(load=load)).reported
    exp = _hey_oracle(path.read_text(encoding="utf-8"))
    for key, value in exp.items():
        assert cell.stats[key] == pytest.approx(value, rel=1e-12), key
    assert cell.load == load and cell.load.key == "concurrency:100:n90000"


def test_hey_errors_file_by_eye() -> None:
    [cell] = parse_file(real("hey-text/akhastaf_webserver_hey_errors_4bbd90b.log")).reported
    assert cell.stats["count"] == 100_000 and cell.stats["errors"] == 4
    assert cell.stats["count"] == round(cell.stats["throughput"] * cell.stats["duration_s"])
    assert cell.params["status_200"] == "99996"
    assert cell.params["latency_p10_ms"] == "5.8" and cell.params["latency_p25_ms"] == "9.5"
    assert cell.stats["latency_p99"] == 20.3


def test_hey_markdown_with_five_runs() -> None:
    path = real("hey-text/bitlet_benchmark_stats_5runs_markdown.md")
    cells = parse_file(path).reported
    assert [c.scenario for c in cells] == ["Bitlet", "Oak", "Alosaur", "Deno", "Node"]
    text = path.read_text(encoding="utf-8")
    blocks = text.split("Summary:")[1:]
    for cell, block in zip(cells, blocks, strict=True):
        exp = _hey_oracle(block)
        assert cell.stats["throughput"] == exp["throughput"]
        assert cell.stats["count"] == exp["count"]


def test_hey_markdown_without_headings_numbers_runs(write) -> None:
    one = real("hey-text/hnakamur_ats-nginx-bad-request_hey_eedd742.log").read_text(encoding="utf-8")
    cells = parse_file(write("runs.md", f"```\n{one}\n```\n```\n{one}\n```\n")).reported
    assert [c.scenario for c in cells] == ["run-1", "run-2"]


def test_hey_csv_samples(write) -> None:
    rows = [("0.0123", "0.0010", "0.0001", "0.0000", "0.0110", "0.0002", "200", "0.0005"),
            ("0.0051", "0.0000", "0.0000", "0.0000", "0.0050", "0.0001", "200", "0.0130"),
            ("0.1203", "0.0000", "0.0000", "0.0000", "0.1200", "0.0003", "503", "0.0021"),
            ("0.0077", "0.0000", "0.0000", "0.0000", "0.0075", "0.0002", "200", "1.0042")]
    header = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"
    path = write("hey.csv", header + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    parsed = parse_file(path, options=ParseOptions(load=LoadSpec("concurrency", 2.0)))
    assert parsed.format == "hey-csv"
    with path.open(newline="") as fh:
        recs = list(csv.DictReader(fh))
    lat_us = np.array([round(float(r["response-time"]) * 1e6) for r in recs])
    assert parsed.samples["latency_us"].to_list() == lat_us.tolist()  # type: ignore[index]
    assert parsed.samples["start_ms"].to_list() == [round(float(r["offset"]) * 1000) for r in recs]  # type: ignore[index]
    [cell] = [c for c in build_cells(parsed).cells if c.scenario is None]
    assert cell.stats["errors"] == 1 and cell.stats["count"] == 4
    assert cell.stats["latency_p75"] == pytest.approx(nearest_rank(lat_us, 75) / 1000, rel=1e-3)


def test_hey_csv_bad_number(write) -> None:
    with pytest.raises(ParseError) as exc:
        parse_file(write("h.csv", "response-time,status-code,offset\n0.1,200,0.0\nfast,200,0.1\n"))
    assert (exc.value.line, exc.value.field) == (3, "response-time")


def test_wrk_latency_file() -> None:
    [c] = parse_file(real("wrk-text/desyang-hub_web-server-cpp_wrk_latency.txt")).reported
    assert c.load == LoadSpec("concurrency", 100.0, duration_s=10.0)
    assert c.stats == {"latency_mean": 1.9, "latency_max": 64.56, "latency_p50": 2.07,
                       "latency_p75": 2.39, "latency_p90": 2.63, "latency_p99": 3.81,
                       "count": 487530.0, "duration_s": 10.1, "throughput": 48268.48,
                       "errors": 0.0, "error_rate": 0.0}
    assert c.params["read_bytes"] == str(round(170.17 * 1024**2))


def test_wrk_errors_and_units() -> None:
    [c] = parse_file(real("wrk-text/Zadneprovski_HttpServer_wrk_socket-errors.log")).reported
    assert c.stats["latency_max"] == 1830.0          # "1.83s"
    # wrk's own totals stay ("88124 requests in", "Requests/sec: 2931.77"); every failure it printed is an
    # error beside them: 88124 non-2xx responses + socket errors (read 88124, timeout 80).
    assert c.stats["count"] == 88124 and c.stats["throughput"] == 2931.77
    assert c.stats["errors"] == 88124 + 88124 + 80
    assert c.stats["error_rate"] == pytest.approx(100.0 * (88124 + 88124 + 80) / (88124 + 88124 + 80))
    assert c.params["socket_errors_read"] == "88124" and c.params["socket_errors"] == str(88124 + 80)
    [long] = parse_file(real("wrk-text/modified/jenkinsci_performance-plugin_WrkResultsLong.wrk")).reported
    assert long.stats["latency_mean"] == 78_270.0    # "78.27s"
    assert long.stats["duration_s"] == pytest.approx(83.33 * 60)   # "83.33m"


def test_wrk_missing_summary(write) -> None:
    with pytest.raises(ParseError, match="lacks"):
        parse_file(write("w.txt", "Running 10s test @ http://x\n  2 threads and 4 connections\n"))

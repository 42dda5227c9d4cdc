"""Histories read for an import: github-action-benchmark data.js and Bencher reports, each entry a run in time
order, each entry's cells as an upload's; values here are written into the test files, so expected by hand."""

from __future__ import annotations

import json

import pytest

from benchtrail.ingest.detect import detect_format, ingest_file
from benchtrail.ingest.model import ParseError, ParseOptions
from benchtrail.ingest.parsers.history import read_history


def _entry(commit: str, date: int, benches: list[dict], tool: str = "customBiggerIsBetter") -> dict:
    return {"commit": {"id": commit, "message": "m", "timestamp": "2024-01-01T00:00:00Z"}, "date": date, "tool": tool,
            "benches": benches}


def test_gab_entries_in_time_order_with_string_values_and_directions(write) -> None:
    data = {"lastUpdate": 3, "repoUrl": "r", "entries": {
        "Custom": [_entry("b", 2000, [{"name": "rps", "value": "31", "unit": "Percent"}]),
                   _entry("a", 1000, [{"name": "rps", "value": 30, "unit": "Percent"}, {"name": "no-unit", "value": 5}])],
        "Node": [_entry("c", 1500, [{"name": "parse", "value": 111, "unit": "ops/sec", "range": "±0.32%"}],
                        tool="benchmarkjs")]}}
    path = write("data.js", "window.BENCHMARK_DATA = " + json.dumps(data) + ";\n")
    assert detect_format(path) == "gab-history"
    runs = read_history(path, "gab-history")
    assert [h.commit for h, _ in runs] == ["a", "c", "b"]
    assert [h.started_at.timestamp() for h, _ in runs] == [1.0, 1.5, 2.0]
    first = {c.scenario: c for c in runs[0][1].reported}
    assert first["rps"].stats["score"] == 30.0 and first["rps"].unit == "Percent ↑"   # customBiggerIsBetter
    assert first["no-unit"].unit == "↑"
    node = runs[1][1].reported[0]
    assert node.unit == "ops/sec" and node.params["range"] == "±0.32%"
    assert runs[2][1].reported[0].stats["score"] == 31.0                                 # "31" read as 31
    with pytest.raises(ParseError, match="import it"):
        ingest_file(path)
    with pytest.raises(ParseError, match="entry 7 is not in the history"):
        ingest_file(path, options=ParseOptions(entry=7))


def test_bencher_listed_reports_and_report_bodies(write) -> None:
    listed = [{
        "uuid": "r2", "start_time": "2024-05-02T10:00:00Z", "end_time": "2024-05-02T10:01:00Z", "adapter": "rust_criterion",
        "branch": {"name": "main", "head": {"version": {"number": 7, "hash": "abc123"}}}, "testbed": {"name": "ci-linux"},
        "results": [[{"measure": {"name": "Latency", "slug": "latency", "units": "nanoseconds (ns)"},
                      "benchmarks": [{"name": "fib", "metric": {"value": 10.0, "lower_value": 9.0, "upper_value": 11.0}}]}],
                    [{"measure": {"name": "Latency", "slug": "latency", "units": "nanoseconds (ns)"},
                      "benchmarks": [{"name": "fib", "metric": {"value": 14.0}}]}]]},
        {"uuid": "r1", "start_time": "2024-05-01T10:00:00Z", "branch": "main", "hash": "def456", "testbed": "ci-linux",
         "results": [json.dumps({"fib": {"latency": {"value": 12.0}, "instructions": {"value": 900.0}}})]}]
    path = write("reports.json", json.dumps(listed))
    assert detect_format(path) == "bencher-reports"
    runs = read_history(path, "bencher-reports")
    assert [(h.commit, h.branch, h.environment) for h, _ in runs] == [("def456", "main", "ci-linux"),
                                                                         ("abc123", "main", "ci-linux")]
    older = {c.mode: c for c in runs[0][1].reported}
    assert older["latency"].stats["score"] == 12.0 and older["latency"].unit == "ns"
    assert older["instructions"].stats["score"] == 900.0
    [newer] = runs[1][1].reported
    assert newer.replicates == [10.0, 14.0] and newer.stats["score"] == 12.0      # two iterations: repetitions
    bad = write("bad.json", json.dumps([{**listed[1], "results": [json.dumps({"fib": {"latency": {"value": "x"}}})]}]))
    with pytest.raises(ParseError) as exc:
        read_history(bad, "bencher-reports")
    assert exc.value.field == "report r1.results[0].fib.latency.value"

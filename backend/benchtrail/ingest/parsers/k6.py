"""k6 results: end-of-test summaries (`--summary-export`, `handleSummary` JSON) and raw sample
streams (`--out json` NDJSON, `--out csv`).

Summaries become one "all scenarios" ReportedCell (k6 aggregates every request). Streams become
samples from `http_req_duration` points; k6 stamps an HTTP sample with the request's end time, so
start = time − duration. The load is ParseOptions.load, else the peak VU count (concurrency).
"""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import datetime
from pathlib import Path

import polars as pl

from ..model import NONE_LOAD, SAMPLE_SCHEMA, LoadSpec, ParsedFile, ParseError, ParseOptions, \
    ReportedCell
from ..textio import read_text

_TREND = {"avg": "latency_mean", "min": "latency_min", "max": "latency_max", "med": "latency_p50",
          "p(50)": "latency_p50", "p(75)": "latency_p75", "p(90)": "latency_p90",
          "p(95)": "latency_p95", "p(99)": "latency_p99", "p(99.9)": "latency_p999"}
# (latency trend, request counter, failure rate): the first present describes the run.
_PRIMARY = (
    ("http_req_duration", "http_reqs", "http_req_failed"),
    ("browser_http_req_duration", None, "browser_http_req_failed"),
    ("grpc_req_duration", "grpc_reqs", None),
    ("ws_session_duration", "ws_sessions", None),
    ("iteration_duration", "iterations", None),
)


def _values(metric: dict) -> dict:
    """handleSummary nests values under "values"; --summary-export flattens them."""
    return metric.get("values", metric) if isinstance(metric, dict) else {}


def parse_summary(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", line=exc.lineno) from exc
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        raise ParseError("a k6 summary has a 'metrics' object")
    if "results" in data and "metadata" in data:
        raise ParseError("k6 machine-readable summary (schema 1.0.0, --new-machine-readable-summary) "
                         "is not supported yet; use --summary-export or handleSummary's data")
    metrics = data["metrics"]
    handle_summary = any(isinstance(m, dict) and "values" in m for m in metrics.values())
    fmt = "k6-handlesummary" if handle_summary else "k6-summary-export"
    primary = next((p for p in _PRIMARY if p[0] in metrics), None)
    if primary is None:
        raise ParseError("k6 summary has no request latency trend (http_req_duration, "
                         "browser_http_req_duration, grpc_req_duration, ws_session_duration or "
                         "iteration_duration)", field="metrics")
    trend_name, counter_name, failed_name = primary
    stats: dict[str, float] = {}
    params: dict[str, str] = {"k6_metric": trend_name}
    for key, value in _values(metrics[trend_name]).items():
        if not isinstance(value, (int, float)):
            continue
        if key in _TREND:
            stats[_TREND[key]] = float(value)
        elif key == "count":
            stats["count"] = float(value)
        else:
            params[f"{trend_name} {key}"] = repr(float(value))
    failed = _values(metrics.get(failed_name, {})) if failed_name else {}
    if counter_name and counter_name in metrics:
        counter = _values(metrics[counter_name])
        stats["count"] = float(counter["count"])
        stats["throughput"] = float(counter["rate"])
    elif failed:
        # Rate "passes" counts non-zero samples: for *_req_failed, the failed requests.
        stats["count"] = float(failed.get("passes", 0) + failed.get("fails", 0))
    if failed:
        stats["errors"] = float(failed.get("passes", 0))
        if stats.get("count"):
            stats["error_rate"] = stats["errors"] * 100.0 / stats["count"]
    duration_ms = (data.get("state") or {}).get("testRunDurationMs")
    if duration_ms:
        stats["duration_s"] = float(duration_ms) / 1000.0
    for name, metric in metrics.items():
        for expr, result in (metric.get("thresholds") or {}).items() if isinstance(metric, dict) else ():
            # summary-export: true means the threshold FAILED; handleSummary: {"ok": bool}
            ok = result.get("ok") if isinstance(result, dict) else not result
            params[f"threshold {name} {expr}"] = "ok" if ok else "failed"
    vus = _values(metrics.get("vus_max", {}))
    peak = vus.get("max", vus.get("value"))
    load = options.load or (LoadSpec("concurrency", float(peak)) if peak else NONE_LOAD)
    cell = ReportedCell(scenario=None, load=load, stats=stats, params=params)
    return ParsedFile(tool="k6", format=fmt, reported=[cell])


def _parse_time(value: str, line: int) -> int:
    """RFC 3339 with nanoseconds and a local offset -> epoch ms."""
    m = re.fullmatch(r"(.+T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", value)
    if not m:
        raise ParseError(f"unreadable time {value!r}", line=line, field="time")
    frac = (m.group(2) or "0")[:6].ljust(6, "0")
    tz = "+00:00" if m.group(3) == "Z" else m.group(3)
    return int(datetime.fromisoformat(f"{m.group(1)}.{frac}{tz}").timestamp() * 1000)


def _samples(rows: list[tuple[str, int, float, bool]], options: ParseOptions, peak_vus: float,
             fmt: str, warnings: list[str]) -> ParsedFile:
    if not rows:
        raise ParseError("no http_req_duration samples in the file")
    load = options.load or (LoadSpec("concurrency", peak_vus) if peak_vus else NONE_LOAD)
    samples = pl.DataFrame({
        "scenario": [r[0] for r in rows],
        "load_key": [load.key] * len(rows),
        "start_ms": [r[1] - round(r[2]) for r in rows],
        "latency_us": [round(r[2] * 1000) for r in rows],
        "success": [r[3] for r in rows],
        "bytes": [0] * len(rows),
        "is_transaction": [False] * len(rows),
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="k6", format=fmt, samples=samples, loads={load.key: load},
                      warnings=warnings)


def _ok(tags: dict[str, str]) -> bool:
    if "expected_response" in tags:
        return tags["expected_response"] == "true"
    status = tags.get("status", "")
    return status.isdigit() and 0 < int(status) < 400


def parse_ndjson(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    rows: list[tuple[str, int, float, bool]] = []
    peak = 0.0
    dropped = 0
    for n, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ParseError(f"invalid JSON line ({exc.msg})", line=n) from exc
        if obj.get("type") != "Point":
            continue
        data = obj.get("data") or {}
        metric = obj.get("metric")
        if metric == "vus":
            peak = max(peak, float(data.get("value", 0)))
        elif metric == "dropped_iterations":
            # arrivals a constant-arrival-rate executor could not start (too few VUs): a validity check
            value = data.get("value")
            if not isinstance(value, (int, float)):
                raise ParseError(f"value {value!r} is not a number", line=n, field="value")
            dropped += int(value)
        elif metric == "http_req_duration":
            tags = data.get("tags") or {}
            value = data.get("value")
            if not isinstance(value, (int, float)):
                raise ParseError(f"value {value!r} is not a number", line=n, field="value")
            rows.append((tags.get("name") or tags.get("url") or "default",
                         _parse_time(str(data.get("time")), n), float(value), _ok(tags)))
    parsed = _samples(rows, options, peak, "k6-json", [])
    if dropped:
        parsed.meta["dropped_iterations"] = dropped
    return parsed


def parse_csv(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    reader = csv.DictReader(io.StringIO(read_text(path)))
    if not reader.fieldnames or reader.fieldnames[:3] != ["metric_name", "timestamp", "metric_value"]:
        raise ParseError("expected a k6 CSV header 'metric_name,timestamp,metric_value,…'", line=1)
    rows: list[tuple[str, int, float, bool]] = []
    peak = 0.0
    for rec in reader:
        n = reader.line_num
        metric = rec["metric_name"]
        if metric not in ("http_req_duration", "vus"):
            continue
        try:
            value = float(rec["metric_value"])
        except (TypeError, ValueError):
            raise ParseError(f"{rec['metric_value']!r} is not a number", line=n,
                             field="metric_value") from None
        if metric == "vus":
            peak = max(peak, value)
            continue
        rows.append((rec.get("name") or rec.get("url") or "default",
                     _csv_time(rec["timestamp"], n), value, _ok(rec)))  # type: ignore[arg-type]
    warnings = ["k6 CSV timestamps default to whole seconds: start times are that coarse"]
    return _samples(rows, options, peak, "k6-csv", warnings)


def _csv_time(text: str, line: int) -> int:
    """K6_CSV_TIME_FORMAT unix (s, default), unix_milli/micro/nano, or rfc3339."""
    if re.fullmatch(r"\d+(\.\d+)?", text):
        v = float(text)
        for scale, div in ((1e17, 1e6), (1e14, 1e3), (1e11, 1.0)):
            if v >= scale:
                return int(v / div)
        return int(v * 1000)
    return _parse_time(text, line)

"""Locust: `--csv PREFIX` (PREFIX_stats.csv, PREFIX_stats_history.csv) and `--json`.

Locust's own numbers are reported as they are: its percentiles come from response times bucketed
to 2 significant digits; history percentiles are cumulative unless --csv-full-history was used.
The load (users) is not in _stats.csv; give it in ParseOptions.load (the history's peak user
count is recorded in meta['max_users']).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from ..model import NONE_LOAD, ParsedFile, ParseError, ParseOptions, ReportedCell, SeriesData
from ..textio import read_text

# normalised header -> stat, for Locust >= 1.0 and the 0.13/0.14 names.
_STATS = {
    "request count": "count", "# requests": "count",
    "failure count": "errors", "# failures": "errors",
    "median response time": "latency_p50",
    "average response time": "latency_mean",
    "min response time": "latency_min",
    "max response time": "latency_max",
    "requests/s": "throughput",
}
_PCT = {"75%": "latency_p75", "90%": "latency_p90", "95%": "latency_p95", "99%": "latency_p99",
        "99.9%": "latency_p999"}
_AGGREGATED = {"Aggregated", "Total"}


def _rows(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    reader = csv.reader(io.StringIO(read_text(path)))
    header = next(reader, [])
    rows = []
    for row in reader:
        if row:
            rows.append((reader.line_num, row))
    return header, rows


def _float(value: str, line: int, field: str) -> float | None:
    if value in ("N/A", ""):
        return None
    try:
        return float(value)
    except ValueError:
        raise ParseError(f"{value!r} is not a number", line=line, field=field) from None


def _scenario(type_: str, name: str) -> str | None:
    if name in _AGGREGATED and type_ in ("", "None"):
        return None
    return f"{type_} {name}" if type_ else name


def parse_stats(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    header, rows = _rows(path)
    if "Name" not in header or "Type" not in header and "Method" not in header:
        raise ParseError(f"not a Locust _stats.csv header: {header[:4]!r}", line=1)
    type_col = header.index("Type") if "Type" in header else header.index("Method")
    name_col = header.index("Name")
    cells = []
    for line, row in rows:
        if len(row) != len(header):
            raise ParseError(f"{len(row)} fields where the header has {len(header)}", line=line)
        stats: dict[str, float] = {}
        params: dict[str, str] = {}
        for col, value in zip(header, row, strict=True):
            key = col.strip().lower()
            if key in _STATS:
                v = _float(value, line, col)
                if v is not None:
                    stats[_STATS[key]] = v
            elif col.endswith("%") or col == "99.999":
                v = _float(value, line, col)
                if v is None:
                    continue
                if col in _PCT:
                    stats[_PCT[col]] = v
                else:
                    params[f"locust_{col.rstrip('%')}%_ms"] = repr(v)
            elif key == "average content size":
                params["avg_content_size_bytes"] = value
            elif key in ("failures/s", "requests failed/s"):
                params["failures_per_s"] = value
        if "count" not in stats:
            raise ParseError("row has no request count", line=line, field="Request Count")
        if stats["count"]:
            stats["error_rate"] = stats.get("errors", 0.0) * 100.0 / stats["count"]
        if "latency_p50" in stats and "50%" in header:
            params["locust_50%_ms"] = row[header.index("50%")]
        cells.append(ReportedCell(scenario=_scenario(row[type_col], row[name_col]),
                                  load=options.load or NONE_LOAD, stats=stats, params=params))
    if not cells:
        raise ParseError("Locust _stats.csv has a header but no rows", line=2)
    return ParsedFile(tool="locust", format="locust-stats", reported=cells)


def parse_history(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    header, rows = _rows(path)
    for required in ("Timestamp", "Name", "Requests/s"):
        if required not in header:
            raise ParseError(f"not a Locust _stats_history.csv: no '{required}' column", line=1)
    ix = {c: i for i, c in enumerate(header)}
    type_col = ix.get("Type")
    metrics = {"Requests/s": "throughput", **{c: m for c, m in _PCT.items()}, "50%": "latency_p50"}
    points: dict[tuple[str | None, str], dict[int, float]] = {}
    max_users = 0
    for line, row in rows:
        if len(row) != len(header):
            raise ParseError(f"{len(row)} fields where the header has {len(header)}", line=line)
        ts = _float(row[ix["Timestamp"]], line, "Timestamp")
        if ts is None:
            raise ParseError("no timestamp", line=line, field="Timestamp")
        if "User Count" in ix:
            users = _float(row[ix["User Count"]], line, "User Count")
            max_users = max(max_users, int(users or 0))
        scenario = _scenario(row[type_col] if type_col is not None else "", row[ix["Name"]])
        total = _float(row[ix["Total Request Count"]], line, "Total Request Count") \
            if "Total Request Count" in ix else None
        for col, metric in metrics.items():
            if col not in ix:
                continue
            v = _float(row[ix[col]], line, col)
            if v is None or (total == 0 and metric != "throughput"):
                continue  # percentiles before the first request are meaningless
            # duplicate timestamps happen (one batch per second): the last row wins
            points.setdefault((scenario, metric), {})[int(ts * 1000)] = v
    if not points:
        raise ParseError("Locust _stats_history.csv has no data rows", line=2)
    series = [SeriesData(metric=metric, scenario=scenario, load=options.load or NONE_LOAD,
                         t_ms=sorted(pts), values=[pts[t] for t in sorted(pts)])
              for (scenario, metric), pts in points.items()]
    return ParsedFile(tool="locust", format="locust-history", series=series,
                      meta={"max_users": max_users})


def parse_json(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    """`locust --json` / `--json-file`: serialised StatsEntry objects with bucketed response
    times; percentiles here are nearest-rank over those buckets."""
    options = options or ParseOptions()
    try:
        entries = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", line=exc.lineno) from exc
    if not isinstance(entries, list):
        raise ParseError("Locust --json output is an array of stats entries")
    cells = []
    merged: dict[float, int] = {}
    total = {"num_requests": 0, "num_failures": 0, "total_response_time": 0.0,
             "min": math.inf, "max": 0.0, "start": math.inf, "last": 0.0}
    for i, e in enumerate(entries):
        try:
            n, f = int(e["num_requests"]), int(e["num_failures"])
            buckets = {float(k): int(v) for k, v in e["response_times"].items()}
            cell_stats = _json_stats(n, f, float(e["total_response_time"]),
                                     e.get("min_response_time"), float(e["max_response_time"]),
                                     float(e["start_time"]), float(e["last_request_timestamp"] or 0),
                                     buckets)
        except (KeyError, TypeError, ValueError) as exc:
            raise ParseError(f"entry [{i}] is not a Locust stats entry ({exc})",
                             field=f"[{i}]") from None
        method = e.get("method") or ""
        cells.append(ReportedCell(scenario=f"{method} {e['name']}".strip(),
                                  load=options.load or NONE_LOAD, stats=cell_stats))
        for k, v in buckets.items():
            merged[k] = merged.get(k, 0) + v
        total["num_requests"] += n
        total["num_failures"] += f
        total["total_response_time"] += float(e["total_response_time"])
        if e.get("min_response_time") is not None:
            total["min"] = min(total["min"], float(e["min_response_time"]))
        total["max"] = max(total["max"], float(e["max_response_time"]))
        total["start"] = min(total["start"], float(e["start_time"]))
        total["last"] = max(total["last"], float(e["last_request_timestamp"] or 0))
    if not cells:
        raise ParseError("Locust --json output has no entries")
    cells.append(ReportedCell(scenario=None, load=options.load or NONE_LOAD, stats=_json_stats(
        int(total["num_requests"]), int(total["num_failures"]), total["total_response_time"],
        None if math.isinf(total["min"]) else total["min"], total["max"], total["start"],
        total["last"], merged)))
    return ParsedFile(tool="locust", format="locust-json", reported=cells)


def _json_stats(n: int, failures: int, total_rt: float, min_rt: float | None, max_rt: float,
                start: float, last: float, buckets: dict[float, int]) -> dict[str, float]:
    stats: dict[str, float] = {"count": float(n), "errors": float(failures)}
    if not n:
        return stats
    stats["error_rate"] = failures * 100.0 / n
    stats["latency_mean"] = total_rt / n
    if min_rt is not None:
        stats["latency_min"] = float(min_rt)
    stats["latency_max"] = max_rt
    if last > start:
        stats["throughput"] = n / (last - start)
        stats["duration_s"] = last - start
    values = sorted(buckets)
    cum = 0
    targets = [("latency_p50", 50), ("latency_p75", 75), ("latency_p90", 90),
               ("latency_p95", 95), ("latency_p99", 99), ("latency_p999", 99.9)]
    count = sum(buckets.values())
    it = iter(targets)
    name, p = next(it)
    for v in values:
        cum += buckets[v]
        while cum >= math.ceil(round(p / 100 * count, 9)):
            stats[name] = v
            try:
                name, p = next(it)
            except StopIteration:
                return stats
    return stats


def parse_failures(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    raise ParseError("Locust _failures.csv lists error messages only and holds no measurements: "
                     "upload PREFIX_stats.csv (and PREFIX_stats_history.csv) from the same run")


def parse_exceptions(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    raise ParseError("Locust _exceptions.csv lists Python tracebacks only and holds no "
                     "measurements: upload PREFIX_stats.csv (and PREFIX_stats_history.csv)")

"""wrk 4.x text output (stdout, possibly with a shell prompt before and Lua output after).

The load is `-c` connections (kind "concurrency") and the `-d` duration from "Running 10s test".
Definitions: count and throughput are wrk's own printed totals ("N requests in", "Requests/sec:"):
the responses wrk read. errors = non-2xx/3xx responses (among those) + every socket error wrk printed
(connect, read, write, timeout: events without a response, so not in wrk's count);
error_rate = errors / (count + socket errors) · 100, the share of every outcome wrk counted that
failed. Each kind is kept in params. Latencies are wrk's coordinated-omission corrected statistics.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from ..model import LoadSpec, ParsedFile, ParseError, ParseOptions, ReportedCell
from ..textio import read_text

_TIME_MS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_BYTES = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
_METRIC = {"k": 1e3, "M": 1e6, "G": 1e9, "": 1.0}
_PCT = {"50": "latency_p50", "75": "latency_p75", "90": "latency_p90", "95": "latency_p95",
        "99": "latency_p99", "99.9": "latency_p999"}


def time_ms(text: str, line: int, field: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text)
    if not m:
        raise ParseError(f"unreadable time {text!r}", line=line, field=field)
    return round(float(m.group(1)) * _TIME_MS[m.group(2)], 6)


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    """One cell per wrk run in the file: a log or a markdown page often holds several (one per connection
    count), each ending with its `Requests/sec:` (and `Transfer/sec:`) line."""
    options = options or ParseOptions()
    lines = list(enumerate(read_text(path).split("\n"), start=1))
    ends = [k for k, (_, line) in enumerate(lines) if line.strip().startswith("Requests/sec:")]
    blocks: list[list[tuple[int, str]]] = []
    start = 0
    for k, end in enumerate(ends):
        stop = end + 1
        if stop < len(lines) and lines[stop][1].strip().startswith("Transfer/sec:"):
            stop += 1
        if k == len(ends) - 1:
            stop = len(lines)      # what follows the last run (Lua output) belongs to it
        blocks.append(lines[start:stop])
        start = stop
    if not blocks:
        blocks = [lines]
    cells, urls, warnings = [], [], []
    for block in blocks:
        cell, url, notes = _cell(block, options)
        cells.append(cell)
        urls.append(url)
        warnings += notes
    keys = [(c.scenario, c.load.key) for c in cells]
    if len(set(keys)) < len(keys):
        raise ParseError(f"{len(cells)} wrk runs in the file, some with the same URL and connections: upload them "
                         "as separate files (repetitions), or one run per file")
    return ParsedFile(tool="wrk", format="wrk-text", reported=cells, meta={"url": urls[0], "runs": len(cells)},
                      warnings=warnings)


def _cell(lines: list[tuple[int, str]], options: ParseOptions) -> tuple[ReportedCell, str | None, list[str]]:
    stats: dict[str, float] = {}
    params: dict[str, str] = {}
    warnings: list[str] = []
    duration = connections = threads = None
    url = None
    non2xx = 0
    section = None
    heading = None
    for n, raw in lines:
        line = raw.strip()
        if h := re.match(r"^#{1,6}\s+(.+?)\s*#*$", line):
            heading = h.group(1)      # a page of several runs names each by its heading
            continue
        if m := re.match(r"Running (\S+) test @ (\S+)", line):
            duration, url = time_ms(m.group(1), n, "duration") / 1000.0, m.group(2)
        elif m := re.match(r"(\d+) threads and (\d+) connections", line):
            threads, connections = int(m.group(1)), int(m.group(2))
        elif line.startswith("Latency Distribution"):
            section = "dist"
        elif line.startswith("Latency ") and section != "dist":
            parts = line.split()
            if len(parts) != 5:
                raise ParseError(f"unreadable Latency row {line!r}", line=n, field="Latency")
            stats["latency_mean"] = time_ms(parts[1], n, "Latency Avg")
            params["latency_stdev_ms"] = repr(time_ms(parts[2], n, "Latency Stdev"))
            stats["latency_max"] = time_ms(parts[3], n, "Latency Max")
            params["latency_within_stdev"] = parts[4]
        elif line.startswith("Req/Sec"):
            parts = line.split()
            for label, v in zip(("avg", "stdev", "max"), parts[1:4], strict=False):
                m2 = re.fullmatch(r"([\d.]+)([kMG]?)", v)
                if m2:
                    params[f"per_thread_req_per_s_{label}"] = repr(
                        float(m2.group(1)) * _METRIC[m2.group(2)])
        elif section == "dist" and (m := re.fullmatch(r"([\d.]+)%\s+(\S+)", line)):
            name = _PCT.get(m.group(1).rstrip("0").rstrip(".") if "." in m.group(1) else m.group(1))
            value = time_ms(m.group(2), n, f"{m.group(1)}%")
            if name:
                stats[name] = value
            else:
                params[f"latency_p{m.group(1)}_ms"] = repr(value)
        elif m := re.match(r"(\d+) requests in (\S+), ([\d.]+)(B|KB|MB|GB|TB) read", line):
            section = None
            stats["count"] = float(m.group(1))
            stats["duration_s"] = time_ms(m.group(2), n, "requests in") / 1000.0
            params["read_bytes"] = str(round(float(m.group(3)) * _BYTES[m.group(4)]))
        elif m := re.match(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                           line):
            for k, v in zip(("connect", "read", "write", "timeout"), m.groups(), strict=True):
                params[f"socket_errors_{k}"] = v
        elif m := re.match(r"Non-2xx or 3xx responses: (\d+)", line):
            non2xx = int(m.group(1))
            params["non_2xx_3xx"] = m.group(1)
        elif m := re.match(r"Requests/sec:\s+([\d.]+)", line):
            stats["throughput"] = float(m.group(1))
        elif m := re.match(r"Transfer/sec:\s+([\d.]+)(B|KB|MB|GB|TB)", line):
            params["transfer_bytes_per_s"] = repr(float(m.group(1)) * _BYTES[m.group(2)])
    if params.get("latency_within_stdev", "").lstrip("-").lower().startswith("nan"):
        # "Latency 0.00us 0.00us 0.00us -nan%": wrk recorded no latency (every answer came after --timeout).
        for key in ("latency_mean", "latency_max", *_PCT.values()):
            stats.pop(key, None)
        params.pop("latency_stdev_ms", None)
        warnings.append("wrk recorded no latency (its Latency row is 0 with a NaN spread): latency left out")
        stats["latency_mean"] = math.nan
    for required in ("count", "throughput", "latency_mean"):
        if required not in stats:
            raise ParseError(f"wrk output lacks '{required}' (expected '… requests in …', "
                             "'Requests/sec:' and the Latency row)")
    socket = sum(int(params.get(f"socket_errors_{k}", 0)) for k in ("connect", "read", "write", "timeout"))
    stats["errors"] = float(non2xx + socket)
    outcomes = stats["count"] + socket
    stats["error_rate"] = stats["errors"] * 100.0 / outcomes if outcomes else 0.0
    if socket:
        params["socket_errors"] = str(socket)
    if math.isnan(stats["latency_mean"]):
        del stats["latency_mean"]
    if options.load is not None:
        load = options.load
    elif connections is not None:
        load = LoadSpec("concurrency", float(connections), duration_s=duration)
    else:
        load = LoadSpec()
    if threads is not None:
        params["threads"] = str(threads)
    scenario = options.scenario or url or heading or "default"
    if url and heading:
        params["heading"] = heading
    return ReportedCell(scenario=scenario, load=load, stats=stats, params=params), url, warnings

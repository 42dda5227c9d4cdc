"""Gatling `simulation.log`, text format (Gatling 3.x up to 3.12), and the HTML report's
`js/stats.json`.

Gatling >= 3.13 writes a binary log (cached strings, int offsets); it is refused with a clear
reason rather than half-decoded. Response time = end − start (ms).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from ..model import NONE_LOAD, SAMPLE_SCHEMA, ParsedFile, ParseError, ParseOptions
from ..textio import read_head, read_text

BINARY_REASON = ("binary Gatling logs (simulation.log of Gatling >= 3.13) are not supported: "
                 "upload the HTML report's js/stats.json instead, or use the text format "
                 "(Gatling <= 3.12)")


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    head = read_head(path, 4096)
    if head.startswith(b"\x00") or b"\x00\x00\x00" in head[:64]:
        m = re.match(rb"^\x00\x00\x00\x00[\x01-\x40](\d+\.\d+(?:\.\d+)?)", head)
        version = f" (header says Gatling {m.group(1).decode()})" if m else ""
        raise ParseError(f"{BINARY_REASON}{version}", line=1)
    lines = read_text(path).split("\n")
    version = None
    simulation = None
    users = 0
    scenario_col: list[str] = []
    start_col: list[int] = []
    latency_col: list[int] = []
    ok_col: list[bool] = []
    for n, line in enumerate(lines, start=1):
        if not line:
            continue
        fields = line.split("\t")
        kind = fields[0]
        if kind == "RUN":
            simulation, version = fields[1], fields[-1].strip()
            if version.startswith(("1.", "2.")):
                raise ParseError(f"Gatling {version} log layout is not supported (3.x only)", line=n)
        elif kind == "USER":
            if "START" in fields:
                users += 1
        elif kind == "REQUEST":
            # 3.4+: REQUEST groups name start end status [msg]; 3.3: a userId comes first.
            i = next((j for j in range(2, len(fields) - 2) if fields[j].isdigit()
                      and fields[j + 1].isdigit() and fields[j + 2] in ("OK", "KO")), None)
            if i is None:
                raise ParseError(f"unreadable REQUEST record {line[:120]!r}: no "
                                 "start, end, OK/KO fields", line=n, field="REQUEST")
            start, end = int(fields[i]), int(fields[i + 1])
            if end < start:
                raise ParseError(f"end {end} before start {start}", line=n, field="end")
            name, groups = fields[i - 1], fields[i - 2] if i >= 3 else ""
            scenario_col.append(f"{groups.replace(',', ' / ')} / {name}" if groups else name)
            start_col.append(start)
            latency_col.append((end - start) * 1000)
            ok_col.append(fields[i + 2] == "OK")
        elif kind in ("GROUP", "ERROR", "ASSERTION"):
            continue
        elif n == 1:
            raise ParseError(f"not a Gatling simulation.log: first record is {kind!r}", line=1)
    if not latency_col:
        raise ParseError("Gatling log has no REQUEST records")
    load = options.load or NONE_LOAD
    samples = pl.DataFrame({
        "scenario": scenario_col, "load_key": [load.key] * len(latency_col),
        "start_ms": start_col, "latency_us": latency_col, "success": ok_col,
        "bytes": [0] * len(latency_col), "is_transaction": [False] * len(latency_col),
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="gatling", format="gatling-log", samples=samples,
                      loads={load.key: load},
                      meta={"gatling_version": version, "simulation": simulation, "users": users})


# Gatling's HTML report indicators: percentiles1..4 default to 50/75/95/99 (gatling.conf
# charting.indicators.percentile1..4).
_STATS_PERCENTILES = {"percentiles1": "latency_p50", "percentiles2": "latency_p75",
                      "percentiles3": "latency_p95", "percentiles4": "latency_p99"}


def parse_stats_json(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    """The HTML report's `js/stats.json`: a tree of groups and requests with summary stats."""
    import json

    from ..model import ReportedCell

    options = options or ParseOptions()
    try:
        root = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", line=exc.lineno) from exc
    if not isinstance(root, dict) or "stats" not in root:
        raise ParseError("a Gatling stats.json has a top-level 'stats' object")
    cells: list[ReportedCell] = []

    def walk(node: dict, top: bool) -> None:
        scenario = None if top else str(node.get("path") or node.get("name"))
        cells.append(ReportedCell(scenario=scenario, load=options.load or NONE_LOAD,
                                  stats=_stats_json(node.get("stats") or {}, scenario),
                                  params={"gatling_type": str(node.get("type", ""))}))
        for child in (node.get("contents") or {}).values():
            walk(child, False)

    walk(root, True)
    return ParsedFile(tool="gatling", format="gatling-stats-json", reported=cells,
                      warnings=["percentiles1..4 read as p50/p75/p95/p99 (gatling.conf defaults)"])


def _stats_json(stats: dict, scenario: str | None) -> dict[str, float]:
    def total(key: str) -> float | None:
        value = (stats.get(key) or {}).get("total")
        if value in (None, "-", ""):
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ParseError(f"{scenario or 'global'}: {key}.total {value!r} is not a number",
                             field=key) from None

    out: dict[str, float] = {}
    for key, stat in (("numberOfRequests", "count"), ("minResponseTime", "latency_min"),
                      ("maxResponseTime", "latency_max"), ("meanResponseTime", "latency_mean"),
                      ("meanNumberOfRequestsPerSecond", "throughput"), *_STATS_PERCENTILES.items()):
        v = total(key)
        if v is not None:
            out[stat] = v
    ko = (stats.get("numberOfRequests") or {}).get("ko")
    if ko not in (None, "-") and "count" in out:
        out["errors"] = float(ko)
        out["error_rate"] = out["errors"] * 100.0 / out["count"] if out["count"] else 0.0
    return out

"""Gatling `simulation.log` (the text records of Gatling 3.x up to 3.12, and the binary records of Gatling
>= 3.13), and the HTML report's `js/stats.json`. Response time = end − start (ms); a request's scenario is
its groups and name joined by " / ".

The binary log (Gatling's LogFileDataWriter, big-endian): one byte per record kind (0 run, 1 request, 2 user,
3 group, 4 error). Strings are `int length` + the bytes of Java's compact string + one coder byte (0 Latin-1,
1 UTF-16 little-endian; length 0 = empty, no coder byte); a cached string is an `int` index, positive when
the string follows (and is cached under it), negative for one written before. The run record holds the
Gatling version, the simulation class, its start (`long` epoch ms), its description, the scenario names and
the assertions; every other time is an `int` offset in ms from that start.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from ..model import NONE_LOAD, SAMPLE_SCHEMA, ParsedFile, ParseError, ParseOptions
from ..textio import read_head, read_text



def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    head = read_head(path, 4096)
    if head.startswith(b"\x00") or b"\x00\x00\x00" in head[:64]:
        return _parse_binary(path, options)
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
    text = read_text(path)
    fmt = "gatling-stats-json"
    if (m := re.match(r"\s*var\s+stats\s*=\s*", text)) is not None:
        # The report's js/stats.js (Gatling <= 3.13): the same tree as a JavaScript object literal, keys not quoted,
        # then the page's functions.
        fmt, text = "gatling-stats-js", _object_literal_as_json(text, m.end())
    try:
        root = json.loads(text)
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
    return ParsedFile(tool="gatling", format=fmt, reported=cells,
                      warnings=["percentiles1..4 read as p50/p75/p95/p99 (gatling.conf defaults)"])


def _object_literal_as_json(text: str, start: int) -> str:
    """The object literal that starts at `start` (up to its closing brace), its bare keys quoted."""
    depth, in_string, escape = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            escape = not escape and ch == "\\"
            if ch == '"' and not escape:
                in_string = False
            elif ch != "\\":
                escape = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                body = text[start:i + 1]
                return re.sub(r'(?m)^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:', r'\1"\2":', body)
    line = text.count("\n", 0, start) + 1
    raise ParseError("js/stats.js: the stats object never closes", line=line)


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


class _Binary:
    """A cursor over a binary simulation.log, naming the byte offset of whatever it cannot read."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0
        self.cache: dict[int, str] = {}

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ParseError(f"binary Gatling log cut off: {what} at byte {self.pos} needs {n} byte(s), "
                             f"{len(self.data) - self.pos} left", field=what)
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def byte(self, what: str) -> int:
        return self.take(1, what)[0]

    def int(self, what: str) -> int:
        return int.from_bytes(self.take(4, what), "big", signed=True)

    def long(self, what: str) -> int:
        return int.from_bytes(self.take(8, what), "big", signed=True)

    def string(self, what: str) -> str:
        n = self.int(what)
        if n == 0:
            return ""
        raw = self.take(n, what)
        coder = self.byte(what)
        if coder == 0:
            return raw.decode("latin-1")
        if coder == 1:
            return raw.decode("utf-16-le")
        raise ParseError(f"binary Gatling log: {what} at byte {self.pos - 1} has coder {coder} (0 or 1 expected)",
                         field=what)

    def cached(self, what: str) -> str:
        index = self.int(what)
        if index > 0:
            self.cache[index] = value = self.string(what)
            return value
        if -index not in self.cache:
            raise ParseError(f"binary Gatling log: {what} at byte {self.pos - 4} refers to string {-index}, never "
                             "written", field=what)
        return self.cache[-index]

    def groups(self) -> list[str]:
        return [self.cached("group") for _ in range(self.int("groups"))]


def _parse_binary(path: Path, options: ParseOptions) -> ParsedFile:
    from ..textio import read_bytes

    r = _Binary(read_bytes(path))
    if r.byte("record") != 0:
        raise ParseError("binary Gatling log does not start with its run record", line=1)
    version = r.string("gatling version")
    simulation = r.string("simulation")
    start = r.long("run start")
    r.string("run description")
    scenarios = [r.string("scenario") for _ in range(r.int("scenarios"))]
    assertions = r.int("assertions")
    for _ in range(assertions):
        r.take(r.int("assertion"), "assertion")
    users = 0
    scenario_col: list[str] = []
    start_col: list[int] = []
    latency_col: list[int] = []
    ok_col: list[bool] = []
    while r.pos < len(r.data):
        at = r.pos
        kind = r.byte("record")
        if kind == 1:          # request
            groups = r.groups()
            name = r.cached("request name")
            t0, t1 = r.int("request start"), r.int("request end")
            ok = r.byte("request status") == 1
            r.cached("request message")
            if t1 < t0:
                raise ParseError(f"binary Gatling log: request '{name}' at byte {at} ends before it starts",
                                 field="end")
            scenario_col.append(" / ".join([*groups, name]))
            start_col.append(start + t0)
            latency_col.append((t1 - t0) * 1000)
            ok_col.append(ok)
        elif kind == 2:        # user
            r.int("user scenario")
            if r.byte("user start") == 1:
                users += 1
            r.int("user time")
        elif kind == 3:        # group
            r.groups()
            r.int("group start")
            r.int("group end")
            r.int("group cumulated time")
            r.byte("group status")
        elif kind == 4:        # error
            r.cached("error message")
            r.int("error time")
        else:
            raise ParseError(f"binary Gatling log: unknown record kind {kind} at byte {at}", field="record")
    if not latency_col:
        raise ParseError("Gatling log has no request records")
    load = options.load or NONE_LOAD
    samples = pl.DataFrame({
        "scenario": scenario_col, "load_key": [load.key] * len(latency_col),
        "start_ms": start_col, "latency_us": latency_col, "success": ok_col,
        "bytes": [0] * len(latency_col), "is_transaction": [False] * len(latency_col),
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="gatling", format="gatling-log", samples=samples, loads={load.key: load},
                      meta={"gatling_version": version, "simulation": simulation, "users": users,
                            "scenarios": scenarios, "assertions": assertions, "binary": True})

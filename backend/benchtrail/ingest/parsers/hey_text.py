"""hey's summary text (default output), also several outputs pasted in one markdown file.

hey never prints the load it ran (-c/-n/-z/-q), so it comes from ParseOptions.load.
Definitions: count = responses with a status code + transport errors; errors = transport errors
+ responses with status >= 400 (what JMeter would mark failed); throughput = hey's Requests/sec
(all results including errors / Total). Every other number hey prints is kept in params.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..model import NONE_LOAD, ParsedFile, ParseError, ParseOptions, ReportedCell
from ..textio import parse_number, read_text

_SUMMARY = {"Total": "duration_s", "Slowest": "latency_max", "Fastest": "latency_min",
            "Average": "latency_mean"}
_PCT = {10: None, 25: None, 50: "latency_p50", 75: "latency_p75", 90: "latency_p90",
        95: "latency_p95", 99: "latency_p99"}
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<name>.+?)\s*#*\s*$|^\*\*(?P<bold>.+)\*\*\s*$")


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    lines = read_text(path).split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == "Summary:"]
    if not starts:
        raise ParseError("no 'Summary:' block (not hey output)")
    cells = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        heading = _heading_before(lines, starts[k - 1] if k else 0, start)
        if len(starts) == 1:
            scenario = options.scenario or heading or "default"
        else:
            scenario = heading or f"run-{k + 1}"
        cells.append(_block(lines, start, end, scenario, options))
    return ParsedFile(tool="hey", format="hey-text", reported=cells,
                      meta={"runs": len(cells)})


def _heading_before(lines: list[str], lo: int, hi: int) -> str | None:
    for line in reversed(lines[lo:hi]):
        m = _HEADING.match(line)
        if m:
            return (m.group("name") or m.group("bold")).strip()
    return None


def _block(lines: list[str], start: int, end: int, scenario: str,
           options: ParseOptions) -> ReportedCell:
    stats: dict[str, float] = {}
    params: dict[str, str] = {}
    section = "summary"
    transport_errors = 0
    responses = 0
    bad_status = 0
    for i in range(start + 1, end):
        n = i + 1
        line = lines[i].strip()
        if line.startswith("#"):
            break  # the next markdown section (several pasted outputs)
        if not line or line.startswith("```"):
            continue
        if line.endswith(":") and "\t" not in line and " in " not in line:
            section = line[:-1]
            continue
        if section == "summary":
            key, _, value = line.partition(":")
            value = value.strip()
            if key in _SUMMARY:
                v = parse_number(value.removesuffix("secs"), line=n, field=key)
                stats[_SUMMARY[key]] = v if key == "Total" else _ms(v)
            elif key == "Requests/sec":
                stats["throughput"] = parse_number(value, line=n, field=key)
            elif key in ("Total data", "Size/request"):
                params[key.lower().replace(" ", "_").replace("/", "_per_") + "_bytes"] = \
                    str(int(parse_number(value.removesuffix("bytes"), line=n, field=key)))
        elif section == "Latency distribution":
            m = re.match(r"^(\d+)%+ in ([\d.]+) secs", line)
            if not m:
                raise ParseError(f"unreadable latency line {line!r}", line=n,
                                 field="Latency distribution")
            pct, value = int(m.group(1)), _ms(float(m.group(2)))
            name = _PCT.get(pct)
            if name:
                stats[name] = value
            else:
                params[f"latency_p{pct}_ms"] = repr(value)
        elif section == "Status code distribution":
            m = re.match(r"^\[(\d+)\]\s+(\d+) responses", line)
            if not m:
                raise ParseError(f"unreadable status line {line!r}", line=n, field="status code")
            code, count = int(m.group(1)), int(m.group(2))
            params[f"status_{code}"] = str(count)
            responses += count
            if code >= 400:
                bad_status += count
        elif section == "Error distribution":
            m = re.match(r"^\[(\d+)\]\s+(.*)$", line)
            if not m:
                raise ParseError(f"unreadable error line {line!r}", line=n, field="error")
            transport_errors += int(m.group(1))
            params[f"error: {m.group(2)[:200]}"] = m.group(1)
        elif section.startswith("Details"):
            key, _, value = line.partition(":")
            parts = [p.strip().removesuffix("secs").strip() for p in value.split(",")]
            if len(parts) == 3:
                for label, v in zip(("avg", "fastest", "slowest"), parts, strict=True):
                    params[f"{key.strip()} {label}_ms"] = repr(_ms(parse_number(v, line=n)))
    for required in ("duration_s", "throughput", "latency_mean"):
        if required not in stats:
            raise ParseError(f"hey summary lacks '{required}'", line=start + 1)
    count = responses + transport_errors
    stats["count"] = float(count)
    stats["errors"] = float(transport_errors + bad_status)
    if count:
        stats["error_rate"] = stats["errors"] * 100.0 / count
    return ReportedCell(scenario=scenario, load=options.load or NONE_LOAD, stats=stats,
                        params=params)


def _ms(seconds: float) -> float:
    # hey prints 4 decimals; rounding removes float noise such as 37.199999999999996.
    return round(seconds * 1000.0, 6)

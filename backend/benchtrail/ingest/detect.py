"""The parser registry and format auto-detection.

`detect_format` looks only at the head of a file (64 KiB), so detection stays cheap for 1 GB JTLs.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cells import CellsResult, Summariser, build_cells
from .model import ParsedFile, ParseError, ParseOptions
from .textio import decode, read_head

Parser = Callable[[Path, ParseOptions | None], ParsedFile]

# format name -> "module:function" under benchtrail.ingest.parsers (imported on first use).
REGISTRY: dict[str, str] = {
    "jmeter-csv": "jmeter_csv:parse",
    "jmeter-xml": "jmeter_xml:parse",
    "hey-text": "hey_text:parse",
    "hey-csv": "hey_csv:parse",
    "wrk-text": "wrk:parse",
    "k6-summary-export": "k6:parse_summary",
    "k6-handlesummary": "k6:parse_summary",
    "k6-json": "k6:parse_ndjson",
    "k6-csv": "k6:parse_csv",
    "locust-stats": "locust:parse_stats",
    "locust-history": "locust:parse_history",
    "locust-json": "locust:parse_json",
    "locust-failures": "locust:parse_failures",
    "locust-exceptions": "locust:parse_exceptions",
    "gatling-log": "gatling:parse",
    "gatling-stats-json": "gatling:parse_stats_json",
    "jmh-json": "jmh_json:parse",
    "jmh-text": "jmh_text:parse",
    "benchtrail-json": "benchtrail_json:parse",
}
FORMATS = tuple(REGISTRY)
# CPU profiles (benchtrail.profiles.read): named in an upload's metadata, never detected; no cells of their own.
PROFILE_FORMATS = ("pprof", "collapsed", "jfr", "benchtrail-profile")
# Formats read in batches (module under parsers with `stream(path, options, summariser)` and
# `check_head(path, options)`): memory stays bounded however long the file, and an upload checks only
# their structure and first rows, the worker parsing the whole file once.
STREAMED: dict[str, str] = {"jmeter-csv": "jmeter_csv"}

_JTL_HEADERLESS = re.compile(r"^\d{9,13}[,\t;|]\d+[,\t;|]")
_GATLING_BINARY = re.compile(rb"^\x00\x00\x00\x00[\x01-\x40]\d+\.\d+")


def get_parser(fmt: str) -> Parser:
    try:
        target = REGISTRY[fmt]
    except KeyError:
        raise ParseError(f"unknown format '{fmt}'; known: {', '.join(FORMATS)}") from None
    module, func = target.split(":")
    return getattr(importlib.import_module(f"{__package__}.parsers.{module}"), func)


def parse_file(path: Path, *, format: str | None = None,  # noqa: A002 - the API's word
               options: ParseOptions | None = None) -> ParsedFile:
    fmt = format or detect_format(path)
    # A parser that reads bytes itself may meet text in no encoding we read (e.g. inside XML).
    return _guarded(path, lambda: get_parser(fmt)(Path(path), options))


def ingest_file(path: Path, *, format: str | None = None,  # noqa: A002 - the API's word
                options: ParseOptions | None = None, warmup_s: float = 0.0) -> tuple[ParsedFile, CellsResult]:
    """One result file to cells and series, the worker's step per file (and per share of a run spread
    over several load generators). A streamed format is read in batches into `SampleCounts`; any other
    is parsed whole. Either way `parsed.samples` is None on return: `result.counts` summarises them."""
    fmt = format or detect_format(path)
    module = STREAMED.get(fmt)
    if module is None:
        parsed = parse_file(path, format=fmt, options=options)
    else:
        parsed = _guarded(path, lambda: _streamer(module).stream(Path(path), options, Summariser(warmup_s=warmup_s)))
    result = build_cells(parsed, warmup_s=warmup_s)
    parsed.samples = None
    return parsed, result


def check_file(path: Path, *, format: str | None = None,  # noqa: A002 - the API's word
               options: ParseOptions | None = None, profile: dict[str, Any] | None = None) -> str:
    """What an upload checks before it is accepted; returns the format. A streamed format: header,
    encoding and its first rows (the worker's full parse reports any later error on the run); any
    other: the whole parse. A CPU profile (`profile`: its upload's description) is read whole."""
    if format in PROFILE_FORMATS:   # a CPU profile: no cells (benchtrail.profiles)
        from benchtrail.profiles.read import check

        profile = profile or {}
        return check(Path(path), format, profile.get("period_ms"), profile.get("runtime") or "jvm")
    fmt = format or detect_format(path)
    module = STREAMED.get(fmt)
    if module is None:
        return parse_file(path, format=fmt, options=options).format
    return _guarded(path, lambda: _streamer(module).check_head(Path(path), options)).format


def _streamer(module: str) -> Any:
    return importlib.import_module(f"{__package__}.parsers.{module}")


def _guarded(path: Path, call: Callable[[], ParsedFile]) -> ParsedFile:
    try:
        return call()
    except UnicodeError as exc:
        raise ParseError(f"{Path(path).name} holds bytes that are not valid text ({exc.reason}, "
                         f"{getattr(exc, 'encoding', 'text')} at byte {getattr(exc, 'start', '?')})") from None


def detect_format(path: Path) -> str:
    path = Path(path)
    head = read_head(path)
    if not head.strip():
        raise ParseError(f"{path.name} is empty")
    if _GATLING_BINARY.match(head):
        return "gatling-log"  # the parser explains why binary logs are refused
    control = sum(1 for b in head[:4096] if b < 9 or 13 < b < 32)
    if control > len(head[:4096]) // 20 and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ParseError(f"{path.name} is a binary file of an unknown kind "
                         f"(starts with {head[:16]!r}); {_supported()}")
    text, _ = decode(head, partial=True)
    stripped = text.lstrip()
    first = stripped.split("\n", 1)[0].strip()
    fmt = _from_json(stripped) if stripped[:1] in "[{" else _from_text(text, stripped, first)
    if fmt is None:
        raise ParseError(f"unrecognised result file {path.name}: it starts with {first[:100]!r}; "
                         f"{_supported()}", line=1)
    return fmt


def _supported() -> str:
    return ("supported: JMeter CSV/XML, hey text/CSV, wrk, k6 (summary export, handleSummary, "
            "--out json, --out csv), Locust (--csv, --json), Gatling text simulation.log and js/stats.json, "
            "JMH (json, text), Benchtrail JSON")


def _from_json(text: str) -> str | None:
    head = text[:20000]
    if text.startswith("{") and '"type":"' in head.split("\n", 1)[0].replace(" ", "") and (
            '"Metric"' in head or '"Point"' in head) and '"metric"' in head:
        return "k6-json"
    if re.search(r'"format"\s*:\s*"benchtrail"', head):
        return "benchtrail-json"
    if text.startswith("[") and '"benchmark"' in head and '"mode"' in head:
        return "jmh-json"
    if '"numberOfRequests"' in head and '"stats"' in head:
        return "gatling-stats-json"
    if text.startswith("[") and '"num_requests"' in head:
        return "locust-json"
    if '"metrics"' in head and ('"root_group"' in head or '"state"' in head):
        if re.search(r'"(state|options|testRunDurationMs|contains)"\s*:', head):
            return "k6-handlesummary"
        return "k6-summary-export"
    return None


def _from_text(text: str, stripped: str, first: str) -> str | None:
    plain = first.replace('"', "")
    if stripped.startswith(("<?xml", "<testResults")):
        return "jmeter-xml"
    if first.startswith("RUN\t"):
        return "gatling-log"
    if plain.startswith("Benchmark") and "Mode" in plain and ("Score" in plain or "Units" in plain):
        return "jmh-text"
    if "Summary:" in text and "Requests/sec:" in text and (
            "Latency distribution" in text or "Response time histogram" in text
            or "Status code distribution" in text):
        if "Success rate:" in text:
            return None  # oha prints a hey look-alike with different semantics
        return "hey-text"
    if re.search(r"Running \S+ test @", text) or ("Thread Stats" in text and "Requests/sec:" in text):
        return "wrk-text"
    if plain.split(",")[0] == "response-time":
        return "hey-csv"
    if plain.startswith("Type,Name,") and ("Request Count" in plain or "# requests" in plain):
        return "locust-stats"
    if plain.startswith(("Timestamp,User Count", "Type,Name,Timestamp")):
        return "locust-history"
    if plain.startswith("Method,Name,Error,Occurrences"):
        return "locust-failures"
    if plain.startswith("Count,Message,Traceback"):
        return "locust-exceptions"
    if plain.startswith("metric_name,timestamp,metric_value"):
        return "k6-csv"
    if re.search(r"(^|[,\t;|])timeStamp([,\t;|]|$)", first) and "elapsed" in first:
        return "jmeter-csv"
    if _JTL_HEADERLESS.match(first):
        return "jmeter-csv"
    return None

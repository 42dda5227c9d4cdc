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
from .storable import check_names
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
    "gatling-stats-js": "gatling:parse_stats_json",
    "jmh-json": "jmh_json:parse",
    "jmh-text": "jmh_text:parse",
    "benchtrail-json": "benchtrail_json:parse",
    "go-bench": "go_bench:parse",
    "pytest-benchmark": "bench_json:parse_pytest",
    "google-benchmark": "bench_json:parse_google",
    "criterion-estimates": "bench_json:parse_criterion",
    "criterion-sample": "bench_json:parse_criterion",
    "hyperfine": "bench_json:parse_hyperfine",
    "bmf": "bench_json:parse_bmf",
    "gab-history": "history:parse_gab_entry",
    "bencher-reports": "history:parse_bencher_entry",
}
# Formats that hold the history of many runs: an upload refuses them (`benchtrail import` reads them).
HISTORIES = frozenset({"gab-history", "bencher-reports"})
FORMATS = tuple(REGISTRY)
# CPU profiles (benchtrail.ingest.parsers.profiles): named in an upload's metadata, never detected; no cells of their own.
PROFILE_FORMATS = ("pprof", "collapsed", "jfr", "benchtrail-profile")
# Formats read in batches (module under parsers with `stream(path, options, summariser)` and
# `check_head(path, options)`): memory stays bounded however long the file, and an upload checks only
# their structure and first rows, the worker parsing the whole file once.
STREAMED: dict[str, str] = {"jmeter-csv": "jmeter_csv"}

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
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
    check_names(parsed)
    result = build_cells(parsed, warmup_s=warmup_s)
    parsed.samples = None
    return parsed, result


def check_file(path: Path, *, format: str | None = None,  # noqa: A002 - the API's word
               options: ParseOptions | None = None, profile: dict[str, Any] | None = None) -> str:
    """What an upload checks before it is accepted; returns the format. A streamed format: header,
    encoding and its first rows (the worker's full parse reports any later error on the run); any
    other: the whole parse. A CPU profile (`profile`: its upload's description) is read whole."""
    if format in PROFILE_FORMATS:   # a CPU profile: no cells (benchtrail.profiles)
        from benchtrail.ingest.parsers.profiles import check

        profile = profile or {}
        return check(Path(path), format, profile.get("period_ms"), profile.get("runtime") or "jvm")
    fmt = format or detect_format(path)
    module = STREAMED.get(fmt)
    if module is None:
        parsed = parse_file(path, format=fmt, options=options)
    else:
        parsed = _guarded(path, lambda: _streamer(module).check_head(Path(path), options))
    check_names(parsed)
    return parsed.format


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
    # Terminal colour codes of a captured console (a CI log, a build tool's colour reset) are no content.
    text = _ANSI.sub("", text)
    stripped = text.lstrip()
    first = stripped.split("\n", 1)[0].strip()
    fmt = _from_json(stripped) if stripped[:1] in "[{" else _from_text(text, stripped, first)
    if fmt is None:
        raise ParseError(f"unrecognised result file {path.name}: it starts with {first[:100]!r}; "
                         f"{_supported()}", line=1)
    return fmt


def _supported() -> str:
    return ("supported: JMeter CSV/XML, hey text/CSV, wrk, k6 (summary export, handleSummary, "
            "--out json, --out csv), Locust (--csv, --json), Gatling simulation.log and js/stats.json, "
            "JMH (json, text), go test -bench, pytest-benchmark, Google Benchmark, Criterion, hyperfine, "
            "Bencher Metric Format, Benchtrail JSON; histories (github-action-benchmark, Bencher reports) "
            "through benchtrail import")


# The detection rule (docs/how-to/formats.md "Detection"): a file is read as the FIRST format of these lists
# whose signature its head (64 KiB) matches; JSON files (starting with `{` or `[`) are tried against
# _JSON_RULES, every other file against _TEXT_RULES. An upload's `format` (CLI `--format`, `;format=`) skips
# detection altogether.
_BMF = re.compile(r'^\{\s*"(?:[^"\\]|\\.)*"\s*:\s*\{\s*"(?:[^"\\]|\\.)*"\s*:\s*\{\s*"(?:value|lower_value|upper_value)"\s*:')
_GO_BENCH = re.compile(r"^Benchmark\S+\s+\d+\s+[-+\d.eE]+\s+\S+", re.MULTILINE)


def _has(head: str, *keys: str) -> bool:
    return all(re.search(rf'"{re.escape(k)}"\s*:', head) for k in keys)


_JSON_RULES: list[tuple[str, Callable[[str], bool]]] = [
    ("k6-json", lambda t: t.startswith("{") and '"type":"' in t.split("\n", 1)[0].replace(" ", "")
        and ('"Metric"' in t or '"Point"' in t) and '"metric"' in t),
    ("benchtrail-json", lambda t: re.search(r'"format"\s*:\s*"benchtrail"', t) is not None),
    ("gab-history", lambda t: t.startswith("{") and _has(t, "entries") and (_has(t, "lastUpdate") or _has(t, "repoUrl"))),
    ("bencher-reports", lambda t: t.startswith("[") and _has(t, "results", "start_time") and (
        _has(t, "testbed") or _has(t, "branch"))),
    ("jmh-json", lambda t: t.startswith("[") and '"benchmark"' in t and '"mode"' in t),
    ("gatling-stats-json", lambda t: '"numberOfRequests"' in t and '"stats"' in t),
    ("locust-json", lambda t: t.startswith("[") and '"num_requests"' in t),
    ("k6-handlesummary", lambda t: '"metrics"' in t and ('"root_group"' in t or '"state"' in t)
        and re.search(r'"(state|options|testRunDurationMs|contains)"\s*:', t) is not None),
    ("k6-summary-export", lambda t: '"metrics"' in t and ('"root_group"' in t or '"state"' in t)),
    ("pytest-benchmark", lambda t: _has(t, "machine_info", "benchmarks")),
    ("google-benchmark", lambda t: _has(t, "context", "benchmarks")),
    ("hyperfine", lambda t: _has(t, "results", "command", "mean")),
    ("criterion-estimates", lambda t: _has(t, "point_estimate", "confidence_interval") and (
        _has(t, "mean") or _has(t, "slope"))),
    ("criterion-sample", lambda t: t.startswith("{") and _has(t, "iters", "times")),
    ("bmf", lambda t: _BMF.match(t) is not None),
]


def _from_json(text: str) -> str | None:
    head = text[:20000]
    return next((fmt for fmt, matches in _JSON_RULES if matches(head)), None)


def _text_rules(text: str, stripped: str, first: str) -> list[tuple[str, Callable[[], bool]]]:
    plain = first.replace('"', "")
    return [
        ("jmeter-xml", lambda: stripped.startswith(("<?xml", "<testResults"))),
        # Gatling writes a simulation's ASSERTION records (when it declares assertions) before its RUN record.
        ("gatling-log", lambda: first.startswith(("RUN\t", "ASSERTION\t"))),
        ("gab-history", lambda: stripped.startswith("window.BENCHMARK_DATA")),
        ("gatling-stats-js", lambda: re.match(r"var\s+stats\s*=\s*\{", stripped) is not None
            and "numberOfRequests" in text),
        # A `-rf text` table, or JMH's console output (its log, then the same table at the end).
        ("jmh-text", lambda: (plain.startswith("Benchmark") and "Mode" in plain and ("Score" in plain or "Units" in plain))
            or first.startswith("# JMH version:")),
        ("hey-text", lambda: "Summary:" in text and "Requests/sec:" in text and "Success rate:" not in text and (
            "Latency distribution" in text or "Response time histogram" in text
            or "Status code distribution" in text)),   # (oha prints a hey look-alike with other meanings)
        ("wrk-text", lambda: re.search(r"Running \S+ test @", text) is not None
            or ("Thread Stats" in text and "Requests/sec:" in text)),
        ("go-bench", lambda: _GO_BENCH.search(text) is not None or (
            first.startswith(("goos:", "goarch:", "pkg:")) and "Benchmark" in text)),
        ("hey-csv", lambda: plain.split(",")[0] == "response-time"),
        ("locust-stats", lambda: plain.startswith("Type,Name,") and ("Request Count" in plain or "# requests" in plain)),
        ("locust-history", lambda: plain.startswith(("Timestamp,User Count", "Type,Name,Timestamp"))),
        ("locust-failures", lambda: plain.startswith("Method,Name,Error,Occurrences")),
        ("locust-exceptions", lambda: plain.startswith("Count,Message,Traceback")),
        ("k6-csv", lambda: plain.startswith("metric_name,timestamp,metric_value")),
        ("jmeter-csv", lambda: (re.search(r"(^|[,\t;|])timeStamp([,\t;|]|$)", first) is not None and "elapsed" in first)
            or _JTL_HEADERLESS.match(first) is not None),
    ]


def _from_text(text: str, stripped: str, first: str) -> str | None:
    return next((fmt for fmt, matches in _text_rules(text, stripped, first) if matches()), None)


def detection_rules() -> dict[str, list[str]]:
    """The formats in the order detection tries them (the manual prints this list)."""
    return {"json": [f for f, _ in _JSON_RULES], "text": [f for f, _ in _text_rules("", "", "")]}

"""What every parser produces: a format-neutral description of one result file.

Parsers never touch the database. They return a `ParsedFile`; `benchtrail.ingest.cells` turns raw
samples into cells and series; the ingest service persists the result in one transaction.

Units are fixed here so no caller has to guess: latencies in **microseconds** (int64) for samples,
milliseconds (float) for reported summary statistics, timestamps in epoch **milliseconds**.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

# The load level is shared with the runner, which installs without the server: defined there.
from benchtrail_runner.plan import NONE_LOAD, LoadKind, LoadSpec  # noqa: F401  (re-exported)

# `ParsedFile.meta["time_base"]` of a file whose sample times count from the tool's own start (hey CSV's
# offset), not from the epoch: the upload's `started_ms` places its series in time.
RELATIVE_TIME = "ms since run start"

if TYPE_CHECKING:
    from .cells import SampleCounts

# Columns of `ParsedFile.samples` (one row per request/sample), in this order and with these types.
SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "scenario": pl.String(),         # JMeter label, hey/k6 endpoint name, Gatling request name
    "load_key": pl.String(),         # LoadSpec.key of the sample's load level (see ParsedFile.loads)
    "start_ms": pl.Int64(),          # request start, epoch ms (or ms since test start when unknown)
    "latency_us": pl.Int64(),        # whole sample time in microseconds
    "success": pl.Boolean(),
    "bytes": pl.Int64(),             # received bytes, 0 when unknown
    "is_transaction": pl.Boolean(),  # JMeter Transaction Controller parent rows (not in totals)
}


@dataclass(slots=True)
class ReportedCell:
    """Summary statistics as a tool reported them (no raw samples): hey text, wrk, Locust stats,
    k6 summaries, JMH, Benchtrail JSON. Keys of `stats` are names from `benchtrail.metrics`
    (count, errors, throughput, duration_s, latency_mean, latency_min, latency_max, latency_p50,
    latency_p75, latency_p90, latency_p95, latency_p99, latency_p999, score, score_error,
    cpu_pct, rss_mb, heap_mb, ...); latency values in ms."""

    scenario: str | None             # None = all scenarios together (an "Aggregated"/total row)
    load: LoadSpec = NONE_LOAD
    stats: dict[str, float] = field(default_factory=dict)
    unit: str | None = None          # JMH score unit (ops/ms, ms/op, ...)
    mode: str | None = None          # JMH mode (thrpt, avgt, sample, ss) or None
    params: dict[str, str] = field(default_factory=dict)   # JMH @Param values, tool specifics
    replicates: list[float] = field(default_factory=list)  # JMH per-iteration raw scores, if any
    # One Benchtrail JSON file may carry several variants; None = the variant the uploader mapped
    # the file to (every other format is single-variant).
    variant: str | None = None
    # One named process of the variant (a consumer, a provider): a resource cell of that process
    # alone, beside the variant's own cells. None = the variant as a whole.
    process: str | None = None


@dataclass(slots=True)
class SeriesData:
    """Points of one metric over time for a scenario/load, as reported by a tool (Locust history)
    or computed from samples (`benchtrail.ingest.cells`)."""

    metric: str                      # name from benchtrail.metrics, e.g. throughput, latency_p75
    scenario: str | None
    load: LoadSpec
    t_ms: list[int]                  # interval start, epoch ms
    values: list[float]
    interval_ms: int | None = None
    variant: str | None = None       # as ReportedCell.variant
    process: str | None = None       # as ReportedCell.process


@dataclass(slots=True)
class ParsedFile:
    tool: str                        # jmeter, hey, wrk, k6, locust, gatling, jmh, benchtrail
    format: str                      # e.g. jmeter-csv, jmeter-xml, hey-text, hey-csv, jmh-text
    samples: pl.DataFrame | None = None          # SAMPLE_SCHEMA, or None for summary formats
    # The samples summarised while a large file was read (`detect.ingest_file`), instead of `samples`.
    counts: SampleCounts | None = None
    loads: dict[str, LoadSpec] = field(default_factory=dict)  # load_key -> LoadSpec for samples
    reported: list[ReportedCell] = field(default_factory=list)
    series: list[SeriesData] = field(default_factory=list)
    meta: dict[str, object] = field(default_factory=dict)     # tool version, jmh version, notes
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """What the uploader knows that the file does not say."""

    load: LoadSpec | None = None     # e.g. hey `-c 100 -n 90000`: hey/wrk/k6/Locust never print it fully
    scenario: str | None = None      # scenario name for single-endpoint tools (hey, wrk)
    columns: tuple[str, ...] | None = None  # column names of a header-less JMeter CSV
    timestamp_is_start: bool = True  # JMeter `sampleresult.timestamp.start` (stock jmeter.properties: true)
    # JMeter `jmeter.save.saveservice.timestamp_format` (a Java SimpleDateFormat pattern) of a CSV whose
    # timeStamp is formatted; None = inferred from the values. `timestamp_zone`: the zone the JVM wrote it in.
    timestamp_format: str | None = None
    timestamp_zone: str | None = None
    entry: int | None = None         # the run of a history file (github-action-benchmark, Bencher) to read


class ParseError(Exception):
    """A file we refuse, with the place and the reason, e.g.
    ParseError("line 17, column 'elapsed': 'abc' is not a number", line=17, field="elapsed")."""

    def __init__(self, reason: str, *, line: int | None = None, field: str | None = None) -> None:
        self.reason = reason
        self.line = line
        self.field = field
        where = []
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {reason}" if where else reason)

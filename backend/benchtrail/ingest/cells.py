"""From raw samples to cells and series.

Definitions (stated once, used by every sample-based format):
- count: samples that are not Transaction Controller parents. Transaction rows form their own
  scenario cells but never enter an "all scenarios" cell (as JMeter's TOTAL row).
- errors: samples with success = false; error_rate = errors / count · 100 (%).
- throughput = count / (last end − first start) in req/s, end = start + latency; duration_s is that
  denominator.
- latency_mean/min/max are exact; latency_p50…p999 are nearest-rank percentiles read from an
  HdrHistogram (1 µs … 1 h, 3 significant digits) built from every sample; see `histogram`.
- warm-up: samples starting in the first `warmup_s` seconds of their load level are left out of
  cells but kept in series.
- series: per interval (epoch-aligned, by start time): throughput (samples starting in the
  interval / the part of the interval the load ran: from the first start to the last end of the
  file, or of the files together, so a test that starts or stops inside an interval shows no dip
  there; an interval the load covered for under `MIN_COVER` of it, or of the whole load when that
  is shorter, has no throughput point: a few requests over a sliver of time are no rate), errors
  (count), and exact nearest-rank latency p50/p75/p95/p99.
- timeline (per cell, what the A/B analysis of a single repetition resamples): per interval of the
  measured samples (epoch-aligned by start time, at most 200 per load level, from 0.1 s), the sample
  count, the sum of latencies (µs) and, for each reported percentile, how many samples were at or
  below the cell's own value of it (`thresholds`, µs). Intervals without samples are left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import polars as pl

from . import histogram
from .model import LoadSpec, ParsedFile, ReportedCell, SeriesData
from ..metrics import PERCENTILES

INTERVAL_CHOICES_S = (1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600)
TIMELINE_CHOICES_S = (0.1, 0.2, 0.5) + INTERVAL_CHOICES_S
MAX_POINTS = 200
SERIES_PERCENTILES = (("latency_p50", 50), ("latency_p75", 75), ("latency_p95", 95),
                      ("latency_p99", 99))
MIN_COVER = 0.1     # an interval the load covered for less than this share has no throughput point


@dataclass(slots=True)
class SampleCell:
    """A cell computed from raw samples. scenario None = all scenarios of the load level."""

    scenario: str | None
    load: LoadSpec
    stats: dict[str, float]
    histogram: str                   # hdrh compressed base64 (latency in µs)
    is_transaction: bool = False
    first_start_ms: int = 0
    last_end_ms: float = 0.0
    thresholds_us: dict[str, int] = field(default_factory=dict)   # "p75" -> the cell's P75 in µs
    timeline: dict[str, object] | None = None                     # see the module docstring


@dataclass(slots=True)
class CellsResult:
    cells: list[SampleCell] = field(default_factory=list)
    series: list[SeriesData] = field(default_factory=list)
    reported: list[ReportedCell] = field(default_factory=list)
    interval_ms: int | None = None
    counts: SampleCounts | None = None     # the samples, summarised (None for summary formats)
    spans: pl.DataFrame | None = None      # when the load ran (`load_spans` of `counts`)
    warmup_excluded: int = 0
    warnings: list[str] = field(default_factory=list)


def choose_interval_s(span_s: float, choices: tuple[float, ...] = INTERVAL_CHOICES_S) -> float:
    """The smallest round interval giving at most 200 points (20–200 for runs of 20 s or more)."""
    for c in choices:
        if span_s / c <= MAX_POINTS:
            return c
    return choices[-1]


def build_cells(parsed: ParsedFile, *, warmup_s: float = 0,
                interval_s: float | None = None, with_series: bool = True) -> CellsResult:
    """Cells (and, unless `with_series` is False, series) of one parsed file: from its summarised
    samples (`parsed.counts`, built while a large file was read) or from its samples."""
    result = CellsResult(reported=list(parsed.reported), series=list(parsed.series))
    counts = parsed.counts
    if counts is None:
        if parsed.samples is None or parsed.samples.height == 0:
            return result
        summariser = Summariser(warmup_s=warmup_s, interval_s=interval_s)
        summariser.add(parsed.samples)
        counts = summariser.finish()
    elif (counts.warmup_s, counts.interval_s) != (float(warmup_s), interval_s):
        raise ValueError(f"samples were summarised for warmup_s={counts.warmup_s}, interval_s={counts.interval_s}, "
                         f"not {warmup_s}, {interval_s}")
    result.counts = counts
    table = counts.table
    if table.height == 0:
        return result
    if int(table.select((pl.col("latency_us") > histogram.HIGHEST_US).sum()).item()):
        result.warnings.append("latencies above 1 hour were clipped to 1 hour in histograms")

    loads = dict(parsed.loads)
    for key in table.get_column("load_key").unique().cast(pl.String).to_list():
        loads.setdefault(key, LoadSpec())  # keys a parser forgot to describe: typeless load

    span_s = (table["last_end"].max() - table["first_start"].min()) / 1000.0  # type: ignore[operator]
    step_s = interval_s if interval_s else choose_interval_s(float(span_s))
    result.interval_ms = int(round(step_s * 1000))
    measured = table.filter(pl.col("measured"))
    result.warmup_excluded = counts.samples - int(measured["n"].sum())
    by_value = measured.group_by("scenario", "load_key", "latency_us").agg(
        pl.col("n").sum(), pl.col("errors").sum(), pl.col("first_start").min(),
        pl.col("last_end").max(), pl.col("is_tx").any())
    result.cells = _cells(by_value, loads)
    _add_timelines(result.cells, measured)
    result.spans = load_spans(table)
    if with_series:
        result.series.extend(_series(table, loads, result.interval_ms, result.spans))
    return result


# Columns of `SampleCounts.table`: per scenario, load key, distinct latency, time bucket and whether the
# samples are measured (not warm-up).
COUNT_KEYS = ("scenario", "load_key", "latency_us", "t", "measured")
_COUNT_MERGE = (
    pl.col("n").sum(), pl.col("errors").sum(), pl.col("first_start").min(), pl.col("last_start").max(),
    pl.col("last_end").max(), pl.col("is_tx").any(),
)
# A sample's end (ms, float: latencies may have fractions of a millisecond).
_END_MS = pl.col("start_ms").cast(pl.Float64) + pl.col("latency_us") / 1000.0
_INTERVAL_MS = tuple(int(round(c * 1000)) for c in INTERVAL_CHOICES_S)
_TIMELINE_MS = tuple(int(round(c * 1000)) for c in TIMELINE_CHOICES_S)


def by_load_key(values: dict[str, int]) -> pl.Expr:
    """`values[load_key]` of each row (every row's key is in `values`): a literal when the keys share one value,
    as they mostly do, else a branch per value. Either is about twice as fast on a 250k-row batch as a lookup
    per row (`replace_strict`, which also casts a categorical key to text first)."""
    keys_of: dict[int, list[str]] = {}
    for key, value in values.items():
        keys_of.setdefault(value, []).append(key)
    *branches, (last, _) = sorted(keys_of.items())
    if not branches:
        return pl.lit(last, dtype=pl.Int64)
    chain = pl.when(pl.col("load_key").is_in(branches[0][1])).then(pl.lit(branches[0][0], dtype=pl.Int64))
    for value, keys in branches[1:]:
        chain = chain.when(pl.col("load_key").is_in(keys)).then(pl.lit(value, dtype=pl.Int64))
    return chain.otherwise(pl.lit(last, dtype=pl.Int64))


@dataclass(slots=True)
class SampleCounts:
    """Every sample of a file, summarised so that cells, series and timelines come out exactly as from
    the samples themselves: per (scenario, load key, distinct latency, start-time bucket `t`,
    measured) the count `n`, `errors`, the first and last start, the last end and whether the rows are
    Transaction Controller parents (`is_tx`). A key has one row, or one per thread group when `finish`
    merged several groups into one load level: readers aggregate rows per key. A bucket is epoch-aligned
    and its width divides every interval the series and timelines can still choose (see `Summariser`),
    so they re-bucket exactly."""

    table: pl.DataFrame
    samples: int
    warmup_s: float = 0.0
    interval_s: float | None = None


class Summariser:
    """Builds `SampleCounts` from batches of samples (`SAMPLE_SCHEMA` columns) read one after another,
    in memory that grows with the distinct latencies per bucket, not with the samples.

    The bucket width of a load key is the greatest common divisor of the series intervals and the
    timeline intervals that the spans seen so far still allow (spans only grow, so the final intervals
    are among them); when it grows, the table is re-bucketed. With a warm-up, samples that may still
    fall in it (those starting before the earliest start seen so far plus the warm-up) are kept raw
    until the end, when the earliest start of each load level is known."""

    MERGE_ROWS = 1_000_000

    def __init__(self, *, warmup_s: float = 0.0, interval_s: float | None = None) -> None:
        self.warmup_s = float(warmup_s)
        self.interval_s = interval_s
        self._warmup_ms = int(round(self.warmup_s * 1000))
        self._interval_ms = int(round(interval_s * 1000)) if interval_s else None
        self.reset()

    def reset(self) -> None:
        self.samples = 0
        self._table: pl.DataFrame | None = None
        self._parts: list[pl.DataFrame] = []
        self._pending = 0
        self._raw: list[pl.DataFrame] = []      # samples that may be warm-up
        self._raw_rows = 0
        self._first: dict[str, int] = {}        # load key -> earliest start seen
        self._span: tuple[float, float] | None = None
        self._measured: dict[str, tuple[float, float]] = {}   # load key -> (first start, last end) measured
        self._width: dict[str, int] = {}

    def add(self, batch: pl.DataFrame) -> None:
        if batch.height == 0:
            return
        df = batch.select(
            pl.col("scenario").cast(pl.Categorical), pl.col("load_key").cast(pl.Categorical),
            "start_ms", "latency_us", "success", "is_transaction")
        self.samples += df.height
        extents = self._extents(df)
        for key, lo, hi in extents:
            self._first[key] = min(self._first.get(key, lo), int(lo))
            s = self._span
            self._span = (min(s[0], lo), max(s[1], hi)) if s else (lo, hi)
        if self._warmup_ms:
            cutoff = pl.col("load_key").replace_strict(
                {k: v + self._warmup_ms for k, v in self._first.items()}, return_dtype=pl.Int64)
            df = df.with_columns((pl.col("start_ms") >= cutoff).alias("measured"))
            maybe = df.filter(~pl.col("measured")).drop("measured")
            if maybe.height:
                self._raw.append(maybe)
                self._raw_rows += maybe.height
            df = df.filter(pl.col("measured")).drop("measured")
            extents = self._extents(df)
        for key, lo, hi in extents:
            m = self._measured.get(key)
            self._measured[key] = (min(m[0], lo), max(m[1], hi)) if m else (lo, hi)
        self._widen()
        if df.height:
            self._parts.append(self._aggregate(df, measured=True))
            self._pending += self._parts[-1].height
        if self._pending >= self.MERGE_ROWS:
            self._merge()
        if self._raw_rows >= self.MERGE_ROWS:
            self._settle_raw()

    def finish(self, relabel: dict[str, str] | None = None) -> SampleCounts:
        """The summary; `relabel` renames load keys (a JMeter thread group to its load level's key,
        known only once every sample has been read; several may become one)."""
        relabel = relabel or {}
        if self._raw:
            raw = pl.concat(self._raw)
            # The warm-up of a load level starts at its earliest sample, over every key it merges.
            first: dict[str, int] = {}
            for key, lo in self._first.items():
                final = relabel.get(key, key)
                first[final] = min(first.get(final, lo), lo)
            cutoff = {k: first[relabel.get(k, k)] + self._warmup_ms for k in self._first}
            raw = raw.with_columns((pl.col("start_ms") >= pl.col("load_key").replace_strict(
                cutoff, return_dtype=pl.Int64)).alias("measured"))
            for flag in (True, False):
                part = raw.filter(pl.col("measured") == flag).drop("measured")
                if part.height:
                    self._parts.append(self._aggregate(part, measured=flag))
            self._raw, self._raw_rows = [], 0
        self._merge()
        table = self._table if self._table is not None else _empty_counts()
        if relabel and any(k != v for k, v in relabel.items()):
            # Keys merged into one load level keep their own rows (every reader sums rows per key).
            table = table.with_columns(pl.col("load_key").cast(pl.String).replace(relabel).cast(pl.Categorical))
        out = SampleCounts(table, self.samples, self.warmup_s, self.interval_s)
        self.reset()
        return out

    @staticmethod
    def _extents(df: pl.DataFrame) -> list[tuple[str, float, float]]:
        if df.height == 0:
            return []
        ext = df.group_by("load_key").agg(pl.col("start_ms").min(), _END_MS.max().alias("end_ms"))
        return [(str(k), float(lo), float(hi)) for k, lo, hi in ext.iter_rows()]

    def _widen(self) -> None:
        """Each key's bucket width for the spans seen so far."""
        if self._interval_ms:
            series = [self._interval_ms]
        else:
            span = (self._span[1] - self._span[0]) / 1000.0 if self._span else 0.0
            least = int(round(choose_interval_s(span) * 1000))
            series = [c for c in _INTERVAL_MS if c >= least]
        for key in self._first:
            m = self._measured.get(key)
            least = int(round(choose_interval_s((m[1] - m[0]) / 1000.0 if m else 0.0, TIMELINE_CHOICES_S) * 1000))
            self._width[key] = math.gcd(*series, *(c for c in _TIMELINE_MS if c >= least))

    def _bucket(self) -> pl.Expr:
        """Each row's bucket width, by its load key (every key seen is in `_width`)."""
        return by_load_key(self._width)

    def _aggregate(self, df: pl.DataFrame, *, measured: bool) -> pl.DataFrame:
        width = self._bucket()
        return df.lazy().group_by(
            "scenario", "load_key", "latency_us", (pl.col("start_ms") - pl.col("start_ms") % width).alias("t"),
        ).agg(
            pl.len().alias("n"),
            (~pl.col("success")).sum().alias("errors"),
            pl.col("start_ms").min().alias("first_start"),
            pl.col("start_ms").max().alias("last_start"),
            pl.col("is_transaction").any().alias("is_tx"),
        ).with_columns(
            # One latency per row here: the last end is the last start's.
            (pl.col("last_start").cast(pl.Float64) + pl.col("latency_us") / 1000.0).alias("last_end"),
            pl.lit(measured).alias("measured"),
        ).select(
            *COUNT_KEYS, "n", "errors", "first_start", "last_start", "last_end", "is_tx").collect()

    def _merge(self) -> None:
        if not self._parts:
            return
        tables = ([self._table] if self._table is not None else []) + self._parts
        self._parts, self._pending = [], 0
        width = self._bucket()
        self._table = pl.concat(tables).with_columns(pl.col("t") - pl.col("t") % width).group_by(
            *COUNT_KEYS).agg(*_COUNT_MERGE)

    def _settle_raw(self) -> None:
        """Aggregate the raw samples now known to be measured (their load key's earliest start moved)."""
        raw = pl.concat(self._raw)
        cutoff = pl.col("load_key").replace_strict(
            {k: v + self._warmup_ms for k, v in self._first.items()}, return_dtype=pl.Int64)
        sure = raw.filter(pl.col("start_ms") >= cutoff)
        rest = raw.filter(pl.col("start_ms") < cutoff)
        if sure.height:
            self._parts.append(self._aggregate(sure, measured=True))
            self._pending += self._parts[-1].height
        self._raw, self._raw_rows = ([rest] if rest.height else []), rest.height


def _empty_counts() -> pl.DataFrame:
    return pl.DataFrame(schema={
        "scenario": pl.Categorical(), "load_key": pl.Categorical(), "latency_us": pl.Int64(), "t": pl.Int64(),
        "measured": pl.Boolean(), "n": pl.UInt32(), "errors": pl.UInt32(), "first_start": pl.Int64(),
        "last_start": pl.Int64(), "last_end": pl.Float64(), "is_tx": pl.Boolean()})


def _cells(by_value: pl.DataFrame, loads: dict[str, LoadSpec]) -> list[SampleCell]:
    """Cells from counts per (scenario, load, distinct latency): stats, "all scenarios" cells and
    histograms never touch the samples again."""
    if by_value.height == 0:
        return []
    by_value = by_value.with_columns(pl.col("scenario", "load_key").cast(pl.String))
    stats_aggs = [
        pl.col("n").sum().alias("count"),
        pl.col("errors").sum().alias("errors"),
        pl.col("latency_us").min().alias("min_us"),
        pl.col("latency_us").max().alias("max_us"),
        (pl.col("latency_us") * pl.col("n")).sum().alias("sum_us"),
        pl.col("first_start").min(),
        pl.col("last_end").max(),
        pl.col("is_tx").any(),
    ]
    non_tx = by_value.filter(~pl.col("is_tx"))
    all_by_value = non_tx.group_by("load_key", "latency_us").agg(
        pl.col("n").sum()).with_columns(pl.lit(None, dtype=pl.String).alias("scenario"))
    per_scenario = by_value.group_by("scenario", "load_key").agg(stats_aggs)
    per_load = non_tx.group_by("load_key").agg(stats_aggs).with_columns(
        pl.lit(None, dtype=pl.String).alias("scenario"))

    hists: dict[tuple[str | None, str], object] = {}
    _fill_histograms(hists, by_value.select("scenario", "load_key", "latency_us", "n"))
    _fill_histograms(hists, all_by_value.select("scenario", "load_key", "latency_us", "n"))

    cells = []
    table = pl.concat([per_scenario, per_load.select(per_scenario.columns)])
    for row in table.sort("load_key", "scenario", nulls_last=True).iter_rows(named=True):
        hist = hists[(row["scenario"], row["load_key"])]
        n = row["count"]
        duration_s = (row["last_end"] - row["first_start"]) / 1000.0
        stats: dict[str, float] = {
            "count": float(n),
            "errors": float(row["errors"]),
            "error_rate": row["errors"] * 100.0 / n,
            "duration_s": duration_s,
            "latency_mean": row["sum_us"] / n / 1000.0,
            "latency_min": row["min_us"] / 1000.0,
            "latency_max": row["max_us"] / 1000.0,
        }
        if duration_s > 0:  # a lone zero-length sample has no rate
            stats["throughput"] = n / duration_s
        thresholds: dict[str, int] = {}
        for name, p in PERCENTILES:
            value_us = histogram.value_at_percentile_us(
                hist, p, exact_min=row["min_us"], exact_max=row["max_us"])  # type: ignore[arg-type]
            stats[f"latency_{name}"] = value_us / 1000.0
            thresholds[name] = int(value_us)
        cells.append(SampleCell(
            scenario=row["scenario"], load=loads[row["load_key"]], stats=stats,
            histogram=histogram.encode(hist),  # type: ignore[arg-type]
            is_transaction=bool(row["is_tx"]) and row["scenario"] is not None,
            first_start_ms=int(row["first_start"]), last_end_ms=float(row["last_end"]),
            thresholds_us=thresholds))
    return cells


def _add_timelines(cells: list[SampleCell], measured: pl.DataFrame) -> None:
    """Each cell's timeline (see the module docstring), from the measured rows of `SampleCounts`."""
    if not cells or measured.height == 0:
        return
    # The interval follows each load level's own span, so a level gives up to 200 intervals.
    spans = measured.group_by("load_key").agg(
        ((pl.col("last_end").max() - pl.col("first_start").min()) / 1000.0).alias("span")).with_columns(
        pl.col("load_key").cast(pl.String))
    steps = {k: int(round(choose_interval_s(span, TIMELINE_CHOICES_S) * 1000)) for k, span in spans.iter_rows()}
    names = [name for name, _ in PERCENTILES]
    step = by_load_key(steps)
    # Rows re-bucketed, not re-grouped: every figure below is a sum over an interval's rows. One lazy query on
    # the categorical keys, the counts at or below a threshold summed as products: 3x faster than eagerly
    # on text keys with a filter per threshold (measured on the 1M-sample file of `make bench-ingest`).
    counts = measured.lazy().select("scenario", "load_key", "latency_us",
                                    (pl.col("t") - pl.col("t") % step).alias("t"), "n", "is_tx")
    thresholds = pl.DataFrame(
        [{"scenario": c.scenario, "load_key": c.load.key, **{f"thr_{n}": c.thresholds_us.get(n) for n in names}}
         for c in cells],
        schema={"scenario": pl.Categorical, "load_key": pl.Categorical, **{f"thr_{n}": pl.Int64 for n in names}},
    ).lazy()
    aggs = [pl.col("n").sum().alias("count"), (pl.col("latency_us") * pl.col("n")).sum().alias("sum"),
            *[(pl.col("n") * (pl.col("latency_us") <= pl.col(f"thr_{n}"))).sum().alias(n) for n in names]]
    per_scenario = counts.join(thresholds.filter(pl.col("scenario").is_not_null()), on=["scenario", "load_key"])
    per_load = counts.filter(~pl.col("is_tx")).drop("scenario").join(
        thresholds.filter(pl.col("scenario").is_null()).drop("scenario"), on="load_key").with_columns(
        pl.lit(None, dtype=pl.Categorical).alias("scenario"))
    table = pl.concat([
        per_scenario.group_by("scenario", "load_key", "t").agg(aggs),
        per_load.group_by("scenario", "load_key", "t").agg(aggs),
    ]).with_columns(pl.col("scenario", "load_key").cast(pl.String)).sort(
        "load_key", "scenario", "t", nulls_last=True).collect()
    by_key = {(c.scenario, c.load.key): c for c in cells}
    for (scenario, load_key), part in table.group_by("scenario", "load_key", maintain_order=True):
        cell = by_key.get((scenario, load_key))  # type: ignore[arg-type]
        if cell is None:
            continue
        cell.timeline = {
            "interval_ms": steps[load_key], "t_ms": part["t"].to_list(), "count": part["count"].to_list(),
            "sum": part["sum"].to_list(), "at_or_below": {n: part[n].to_list() for n in names},
            "thresholds": dict(cell.thresholds_us),
        }


def _fill_histograms(hists: dict[tuple[str | None, str], object], counts: pl.DataFrame) -> None:
    for (scenario, load_key), part in counts.group_by("scenario", "load_key"):
        hist = histogram.new_histogram()
        histogram.record_counts(hist, part["latency_us"].to_numpy(), part["n"].to_numpy())
        hists[(scenario, load_key)] = hist  # type: ignore[assignment]


def interval_counts(table: pl.DataFrame, interval_ms: int, shift_ms: int = 0) -> pl.DataFrame:
    """A file's `SampleCounts.table` reduced to what its series are computed from, per interval (moved
    by `shift_ms`, a whole number of intervals): the counts of several files that ran at the same time
    concatenate into the counts of all their samples together (`union_series`)."""
    t = pl.col("t") - pl.col("t") % interval_ms + shift_ms
    return table.group_by(pl.col("scenario", "load_key").cast(pl.String), t.alias("t"), "latency_us", "is_tx").agg(
        pl.col("n").sum(), pl.col("errors").sum())


def load_spans(table: pl.DataFrame) -> pl.DataFrame:
    """When a file's load ran, from its `SampleCounts.table`: per scenario and per load level (scenario
    null, Transaction Controller scenarios left out) the first start and the last end (ms)."""
    per_scenario = table.group_by(pl.col("scenario", "load_key").cast(pl.String)).agg(
        pl.col("first_start").min().cast(pl.Float64).alias("start"), pl.col("last_end").max().alias("end"),
        pl.col("is_tx").any())
    per_load = per_scenario.filter(~pl.col("is_tx")).group_by("load_key").agg(
        pl.col("start").min(), pl.col("end").max()).select(
        pl.lit(None, dtype=pl.String).alias("scenario"), "load_key", "start", "end")
    return pl.concat([per_scenario.drop("is_tx"), per_load])


def union_series(counts: list[pl.DataFrame], spans: list[pl.DataFrame], loads: dict[str, LoadSpec],
                 interval_ms: int) -> list[SeriesData]:
    """The series of the samples of several files together, from their `interval_counts` and `load_spans`:
    each interval's throughput and errors add up over the time any of them ran, and its percentiles are
    those of every sample in it."""
    table = pl.concat(counts).with_columns(pl.col("scenario", "load_key").cast(pl.Categorical))
    return _series(table, loads, interval_ms, pl.concat(spans))


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The time some of `spans` (start, end in ms) ran, as disjoint spans in time order."""
    out: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _throughput(t_ms: list[int], n: list[int], interval_ms: int,
                spans: list[tuple[float, float]]) -> tuple[list[int], list[float]]:
    """(t, requests started per second the load ran) of each interval it covered enough (`MIN_COVER`)."""
    ran = _merged(spans)
    least = MIN_COVER * min(interval_ms, sum(end - start for start, end in ran))
    kept = []
    for t, count in zip(t_ms, n):
        covered = sum(max(0.0, min(t + interval_ms, end) - max(t, start)) for start, end in ran)
        if covered > 0 and covered >= least:
            kept.append((t, count * 1000.0 / covered))
    return [t for t, _ in kept], [v for _, v in kept]


def _series(counts: pl.DataFrame, loads: dict[str, LoadSpec], interval_ms: int,
            spans: pl.DataFrame) -> list[SeriesData]:
    """Series from the rows of `SampleCounts` (bucketed by a divisor of `interval_ms`): each exact
    nearest-rank percentile is read off the cumulative counts of an interval's rows in latency order;
    throughput over the part of each interval the load ran (`spans`, as `load_spans`)."""
    keys = ["scenario", "load_key", "t"]
    counts = counts.select("scenario", "load_key", (pl.col("t") - pl.col("t") % interval_ms).alias("t"),
                           "latency_us", "n", "errors", "is_tx")
    # "All scenarios" of a load level: its rows without their scenario (Transaction Controller rows left out).
    every = counts.filter(~pl.col("is_tx")).with_columns(pl.lit(None, dtype=pl.Categorical).alias("scenario"))
    # Sorted by latency once: a group keeps its rows in this order, so `cum` climbs through its latencies.
    cum = pl.col("n").cum_sum()
    aggs = [pl.col("n").sum().alias("n"), pl.col("errors").sum().alias("errors")]
    for name, p in SERIES_PERCENTILES:
        rank = (pl.col("n").sum().cast(pl.Int64) * p + 99) // 100   # ceil(p·n/100), exact
        aggs.append(pl.col("latency_us").gather(cum.search_sorted(rank)).first().alias(name))
    table = pl.concat([counts, every]).sort("latency_us").group_by(keys).agg(aggs).with_columns(
        pl.col("scenario", "load_key").cast(pl.String)).sort("load_key", "scenario", "t", nulls_last=True)
    ran: dict[tuple[str | None, str], list[tuple[float, float]]] = {}
    for scenario, load_key, start, end in spans.iter_rows():
        ran.setdefault((scenario, load_key), []).append((start, end))
    out: list[SeriesData] = []
    for (scenario, load_key), part in table.group_by("scenario", "load_key", maintain_order=True):
        t = part["t"].to_list()
        load = loads[load_key]  # type: ignore[index]
        columns = {
            "throughput": _throughput(t, part["n"].to_list(), interval_ms, ran[(scenario, load_key)]),  # type: ignore[index]
            "errors": (t, part["errors"].cast(pl.Float64).to_list()),
            **{name: (t, (part[name] / 1000.0).to_list()) for name, _ in SERIES_PERCENTILES},
        }
        for metric, (times, values) in columns.items():
            out.append(SeriesData(metric=metric, scenario=scenario, load=load,  # type: ignore[arg-type]
                                  t_ms=times, values=values, interval_ms=interval_ms))
    return out

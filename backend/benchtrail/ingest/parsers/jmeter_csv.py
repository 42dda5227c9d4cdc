"""JMeter CSV JTL (`-l file.jtl`, Simple Data Writer), every column set JMeter and Taurus write.

Read with polars (a 1M-row file in a fraction of a second); only when polars refuses a file or a
required value is missing do we re-read it with the csv module, to name the exact line and column.
"""

from __future__ import annotations

import csv
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import polars as pl

from ..cells import Summariser
from ..model import NONE_LOAD, SAMPLE_SCHEMA, LoadSpec, ParsedFile, ParseError, ParseOptions
from ..storable import check_batch
from ..textio import GZIP_MAGIC, decode, iter_lines, read_head, recode, text_encoding
from . import jmeter_time

# Default column sets of header-less files, by column count: JMeter <= 2.11 and 2.12-2.13 (no header by
# default), and the default sets of 3.0, 3.1-4.0 and 5.x written with print_field_names=false.
HEADERLESS_COLUMNS: dict[int, tuple[str, ...]] = {
    10: ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName",
         "dataType", "success", "bytes", "Latency"),
    12: ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName",
         "dataType", "success", "bytes", "grpThreads", "allThreads", "Latency"),
    14: ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType", "success",
         "failureMessage", "bytes", "grpThreads", "allThreads", "Latency", "IdleTime"),
    16: ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType", "success",
         "failureMessage", "bytes", "sentBytes", "grpThreads", "allThreads", "Latency", "IdleTime", "Connect"),
    17: ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType", "success",
         "failureMessage", "bytes", "sentBytes", "grpThreads", "allThreads", "URL", "Latency", "IdleTime", "Connect"),
}
KNOWN_COLUMNS = frozenset({
    "timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType",
    "success", "failureMessage", "bytes", "sentBytes", "grpThreads", "allThreads", "URL", "Filename",
    "Latency", "Encoding", "SampleCount", "ErrorCount", "Hostname", "IdleTime", "Connect",
})
DELIMITERS = (",", "\t", ";", "|")
INT_COLUMNS = ("timeStamp", "elapsed", "bytes", "grpThreads")
CATEGORICAL_COLUMNS = ("label", "threadName", "responseMessage", "success")
# A batch's samples: SAMPLE_SCHEMA, but scenario and load key stay categorical (the summariser groups by
# them); `parse` casts the whole to SAMPLE_SCHEMA.
BATCH_SCHEMA = {**SAMPLE_SCHEMA, "scenario": pl.Categorical(), "load_key": pl.Categorical()}
TRANSACTION_PREFIX = "Number of samples in transaction"
EMPTY_TRANSACTION_PREFIX = "Number of samples in transaction : 0,"
# "<Thread Group name> <group#>-<thread#>" (JMeter's JMeterThread naming).
THREAD_NAME = re.compile(r"^(.*?)\s*(\d+)-(\d+)$")


BATCH_ROWS = 250_000
HEAD_ROWS = 20_000   # rows the upload's structure check reads


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    """The whole file, its samples in memory (small files, tests); `stream` for large ones."""
    batches: list[pl.DataFrame] = []
    parsed = _run(path, options or ParseOptions(), batches.append, n_rows=None, reset=batches.clear)
    relabel = parsed.meta.pop("relabel")
    samples = (pl.concat(batches).cast(SAMPLE_SCHEMA) if batches  # type: ignore[arg-type]
               else pl.DataFrame(schema=SAMPLE_SCHEMA))
    parsed.samples = samples.with_columns(pl.col("load_key").replace(relabel))
    return parsed


def stream(path: Path, options: ParseOptions | None, summariser: Summariser) -> ParsedFile:
    """The file read in batches of `BATCH_ROWS` into `summariser`: memory stays bounded whatever its
    length. `parsed.counts` holds the summary; `parsed.samples` stays None."""
    parsed = _run(path, options or ParseOptions(), summariser.add, n_rows=None, reset=summariser.reset)
    parsed.counts = summariser.finish(parsed.meta.pop("relabel"))  # type: ignore[arg-type]
    return parsed


def check_head(path: Path, options: ParseOptions | None = None, rows: int = HEAD_ROWS) -> ParsedFile:
    """The upload's cheap structure check: header, delimiter, encoding and the first `rows` rows,
    parsed exactly as the worker will parse the whole file; the truncated-last-line check too."""
    parsed = _run(path, options or ParseOptions(), check_batch, n_rows=rows)
    parsed.meta.pop("relabel")
    return parsed


def _run(path: Path, options: ParseOptions, sink: Callable[[pl.DataFrame], None], *, n_rows: int | None,
         reset: Callable[[], None] | None = None) -> ParsedFile:
    head = read_head(path)
    if not head.strip():
        raise ParseError(f"{path.name} is empty")
    head_text, encoding = decode(head, partial=True)
    with path.open("rb") as fh:
        gzipped = fh.read(2) == GZIP_MAGIC
    needs_recode = (gzipped or encoding != "utf-8" or head.startswith(b"\xef\xbb\xbf")
                    or b"\r\r\n" in head)
    first_line = head_text.split("\n", 1)[0]
    delimiter, columns, has_header = _layout(first_line, options)

    wanted = [c for c in ("timeStamp", "elapsed", "label", "responseMessage", "threadName",
                          "success", "bytes", "grpThreads") if c in columns]
    for required in ("timeStamp", "elapsed"):
        if required not in columns:
            raise ParseError(f"a JMeter CSV needs the '{required}' column; the header has "
                             f"{', '.join(columns)}", line=1)
    stamps = _first_values(head_text, delimiter, columns, has_header, "timeStamp")
    fmt = None
    if options.timestamp_format or any(v.strip() and not re.fullmatch(r"-?\d+", v.strip()) for v in stamps[:1]):
        fmt = jmeter_time.time_format(stamps, options.timestamp_format, options.timestamp_zone)
    layout = (delimiter, columns, has_header, wanted, fmt)
    with tempfile.TemporaryDirectory(prefix="benchtrail-jtl-") as tmp:
        # Polars reads UTF-8 with `\n` line ends only: anything else is recoded to a scratch copy first.
        source = recode(path, Path(tmp) / "utf8.csv", limit=n_rows and 4 * n_rows + 1) if needs_recode else path
        state = _State(options, columns)
        try:
            _read(source, layout, state, sink, n_rows)
        except pl.exceptions.PolarsError as exc:
            _locate_error(path, delimiter, columns, has_header, limit=n_rows, fmt=fmt)
            if needs_recode or n_rows is not None or text_encoding(path) == "utf-8":
                raise ParseError(f"unreadable CSV: {str(exc).splitlines()[0]}") from exc
            # The head was UTF-8 but a later part is not (e.g. a GBK label): read the decoded text.
            if reset is not None:
                reset()
            state = _State(options, columns)
            _read(recode(path, Path(tmp) / "utf8.csv"), layout, state, sink, n_rows)
    if state.rows == 0:
        raise ParseError(f"{path.name} has a header but no samples", line=2)
    if not gzipped:
        _check_tail(path, delimiter, len(columns))
    parsed = state.parsed(columns, has_header)
    if fmt is not None:
        parsed.meta["timestamp_format"] = fmt.java
        parsed.meta["timestamp_zone"] = "in the values" if fmt.has_zone else fmt.zone
        parsed.meta["timestamp_precision_ms"] = fmt.precision_ms
        note = fmt.describe()
        if fmt.precision_ms > 1:
            note += ("; latencies (elapsed) stay exact, but duration, throughput and the series are known to a "
                     "second")
        parsed.warnings.append(note)
    return parsed


def _first_values(head_text: str, delimiter: str, columns: tuple[str, ...], has_header: bool, name: str,
                  limit: int = 500) -> list[str]:
    """The first rows' values of column `name` in the file's head (a cut last row left out)."""
    if name not in columns:
        return []
    index = columns.index(name)
    lines = head_text.split("\n")
    rows = csv.reader(lines[:-1] if len(lines) > 1 else lines, delimiter=delimiter, quotechar='"')
    if has_header:
        next(rows, None)
    out = []
    for row in rows:
        if len(row) == len(columns):
            out.append(row[index])
            if len(out) >= limit:
                break
    return out


def _read(source: Path, layout: tuple[str, tuple[str, ...], bool, list[str], jmeter_time.TimeFormat | None],
          state: _State, sink: Callable[[pl.DataFrame], None], n_rows: int | None) -> None:
    delimiter, columns, has_header, wanted, fmt = layout
    ints = [c for c in INT_COLUMNS if c in wanted and not (c == "timeStamp" and fmt is not None)]
    # Labels, thread names, messages and success flags repeat on every row: read as categoricals, they are
    # grouped and compared by their codes.
    dtypes = {**{c: pl.Int64 for c in ints}, **{c: pl.Categorical for c in CATEGORICAL_COLUMNS if c in wanted}}
    if has_header:
        # scan + select pushes the projection down: only the columns we use are materialised.
        frame = pl.scan_csv(source, separator=delimiter, schema_overrides=dtypes,
                            infer_schema=False, quote_char='"', n_rows=n_rows).select(wanted)
    else:
        frame = pl.scan_csv(source, separator=delimiter, has_header=False, new_columns=list(columns),
                            infer_schema=False, quote_char='"', n_rows=n_rows,
                            ).select(wanted).with_columns(pl.col(c).cast(t) for c, t in dtypes.items())
    if fmt is not None:
        frame = frame.with_columns(jmeter_time.epoch_ms_expr(fmt))
    batches = [frame.collect()] if n_rows is not None else frame.collect_batches(chunk_size=BATCH_ROWS)
    required = [c for c in ("timeStamp", "elapsed", "success") if c in wanted]
    for df in batches:
        if df.height == 0:
            continue
        if any(df[c].null_count() for c in required):
            _locate_error(source, delimiter, columns, has_header, limit=n_rows, fmt=fmt)
            raise ParseError("a sample lacks timeStamp, elapsed or success")
        sink(state.samples(df))


def _layout(first_line: str, options: ParseOptions) -> tuple[str, tuple[str, ...], bool]:
    """(delimiter, column names, whether line 1 is a header)."""
    best: tuple[int, str, list[str]] = (0, ",", [])
    for d in DELIMITERS:
        fields = next(csv.reader([first_line], delimiter=d))
        known = sum(1 for f in fields if f in KNOWN_COLUMNS)
        if known > best[0]:
            best = (known, d, fields)
    if best[0] >= 2:
        return best[1], tuple(best[2]), True
    # No header: JMeter <= 2.13 defaults; choose the delimiter by the field count.
    for d in DELIMITERS:
        fields = next(csv.reader([first_line], delimiter=d))
        if len(fields) > 1 and fields[0].strip().isdigit():
            if options.columns:
                if len(options.columns) != len(fields):
                    raise ParseError(f"{len(fields)} fields but {len(options.columns)} column names "
                                     "were given", line=1)
                return d, tuple(options.columns), False
            if len(fields) in HEADERLESS_COLUMNS:
                return d, HEADERLESS_COLUMNS[len(fields)], False
            raise ParseError(
                f"header-less JMeter CSV with {len(fields)} columns: only JMeter's default sets (10, 12, 14, 16 "
                "or 17 columns) are known; give the column names (jmeter.properties save-service settings) or "
                "write the file with a header", line=1)
    raise ParseError(
        f"cannot find the delimiter: line 1 {first_line[:120]!r} has no JMeter column names when split "
        "by ',', tab, ';' or '|' (wrong delimiter or not a JMeter CSV)", line=1)


def _locate_error(path: Path, delimiter: str, columns: tuple[str, ...], has_header: bool,
                  limit: int | None = None, fmt: jmeter_time.TimeFormat | None = None) -> None:
    """Re-read with the csv module, line by line, and raise a ParseError at the first bad line, if
    any (within the first `limit` rows when given)."""
    reader = csv.reader(iter_lines(path), delimiter=delimiter, quotechar='"')
    index = {c: i for i, c in enumerate(columns)}
    line_end = 0
    rows = iter(reader)
    if has_header:
        next(rows, None)
        line_end = reader.line_num
    for n, row in enumerate(rows):
        if limit is not None and n >= limit * 4:
            return
        line = line_end + 1
        line_end = reader.line_num
        if not row:
            continue
        if len(row) != len(columns):
            joined = delimiter.join(row)
            other = next((d for d in DELIMITERS if d != delimiter
                          and len(next(csv.reader([joined], delimiter=d))) == len(columns)), None)
            if other is not None:
                hint = (f"wrong delimiter: this row is separated by {other!r} but the header by "
                        f"{delimiter!r}")
            elif len(row) < len(columns) and next((r for r in rows if r), None) is None:
                hint = "the last line is truncated (was JMeter killed mid-write?)"
            else:
                hint = f"wrong delimiter {delimiter!r} or a broken quote?"
            raise ParseError(f"{len(row)} field(s) where the header has {len(columns)}: {hint}",
                             line=line)
        for name in INT_COLUMNS:
            i = index.get(name)
            if i is None:
                continue
            value = row[i].strip()
            if name == "timeStamp" and fmt is not None:
                why = jmeter_time.check_value(value, fmt)
                if why is not None:
                    raise ParseError(f"column 'timeStamp': {why}", line=line, field=name)
                continue
            if not re.fullmatch(r"-?\d+", value):
                raise ParseError(f"column '{name}': {value!r} is not a number", line=line, field=name)
        i = index.get("success")
        if i is not None and row[i].strip().lower() not in ("true", "false"):
            raise ParseError(f"column 'success': {row[i]!r} is not true/false", line=line,
                             field="success")


def _check_tail(path: Path, delimiter: str, n_columns: int) -> None:
    """A run killed mid-write leaves a last line with too few fields but valid numbers, which
    polars silently pads with nulls only in optional columns; catch it from the file's tail."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        fh.seek(max(0, size - 8192))
        tail = fh.read()
    if tail.endswith(b"\n"):
        return
    last = decode(tail, partial=True)[0].rsplit("\n", 1)[-1]
    if not last or '"' in last:
        return
    fields = last.split(delimiter)
    if len(fields) < n_columns:
        with path.open("rb") as fh:
            n_lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) + 1
        raise ParseError(f"{len(fields)} field(s) where the header has {n_columns}: the last line is "
                         "truncated (was JMeter killed mid-write?)", line=n_lines)


class _State:
    """What the batches of one file add up to besides their samples: row count, skipped rows and the
    thread groups (a group's load level is known only once every row has been read, so batches carry
    the group's name as their load key until `parsed` says which load level each group is)."""

    def __init__(self, options: ParseOptions, columns: tuple[str, ...]) -> None:
        self.options = options
        self.columns = columns
        self.rows = 0
        self.empty_tx = 0
        self.group_of: dict[str, str] = {}            # threadName -> thread group
        self.threads: dict[str, set[str]] = {}        # thread group -> its threads
        self.grp: dict[str, int | None] = {}          # thread group -> most active threads (grpThreads)

    def samples(self, df: pl.DataFrame) -> pl.DataFrame:
        """One batch of rows as SAMPLE_SCHEMA, its load key the thread group's name."""
        is_tx = pl.lit(False)
        if "responseMessage" in df.columns:
            # starts_with on a null is null, and filter/sum treat null as false: no fill_null copy.
            msg = pl.col("responseMessage")
            empty_tx = int(df.select(msg.cat.starts_with(EMPTY_TRANSACTION_PREFIX).sum()).item())
            if empty_tx:
                # JMeter's report generator skips empty controllers everywhere; so do we.
                df = df.filter(~msg.cat.starts_with(EMPTY_TRANSACTION_PREFIX).fill_null(False))
                self.empty_tx += empty_tx
            is_tx = msg.cat.starts_with(TRANSACTION_PREFIX).fill_null(False)
        self.rows += df.height
        group = self.samples_groups(df)
        ts = pl.col("timeStamp")
        start = ts if self.options.timestamp_is_start else ts - pl.col("elapsed")
        success = pl.col("success").is_in(["true", "True", "TRUE"]) if "success" in df.columns \
            else pl.lit(True)
        return df.select(
            _no_nulls(df, "label").alias("scenario") if "label" in df.columns
            else pl.lit("(unlabelled)").alias("scenario"),
            group.alias("load_key"),
            start.alias("start_ms"),
            (pl.col("elapsed") * 1000).alias("latency_us"),
            success.alias("success"),
            _no_nulls(df, "bytes", 0).alias("bytes") if "bytes" in df.columns
            else pl.lit(0, dtype=pl.Int64).alias("bytes"),
            is_tx.alias("is_transaction"),
        ).cast(BATCH_SCHEMA)  # type: ignore[arg-type]

    def samples_groups(self, df: pl.DataFrame) -> pl.Expr:
        """Thread group = threadName minus its trailing " <group#>-<thread#>"."""
        has_grp = "grpThreads" in df.columns
        if "threadName" not in df.columns:
            if has_grp:
                self._note_grp("", df.select(pl.col("grpThreads").max()).item())
            self.threads.setdefault("", set())
            return pl.lit("")
        aggs = [pl.col("grpThreads").max().alias("grp")] if has_grp else [pl.len()]
        per_thread = df.group_by(pl.col("threadName").fill_null("")).agg(aggs)
        for row in per_thread.iter_rows(named=True):
            name = row["threadName"]
            group = self.group_of.get(name)
            if group is None:
                m = THREAD_NAME.match(name)
                group, thread = (m.group(1), f"{m.group(2)}-{m.group(3)}") if m else (name, name)
                self.group_of[name] = group
                self.threads.setdefault(group, set()).add(thread)
            self._note_grp(group, row.get("grp"))
        if len(self.group_of) == 1:
            return pl.lit(next(iter(self.group_of.values())))
        return pl.col("threadName").fill_null("").replace_strict(self.group_of, return_dtype=pl.String)

    def _note_grp(self, group: str, grp: int | None) -> None:
        old = self.grp.get(group)
        self.grp[group] = grp if old is None or (grp is not None and grp > old) else old

    def parsed(self, columns: tuple[str, ...], has_header: bool) -> ParsedFile:
        """The file's description; `meta["relabel"]` maps each batch load key to its load level's key
        (the caller pops it)."""
        warnings: list[str] = []
        if self.empty_tx:
            warnings.append(f"skipped {self.empty_tx} empty Transaction Controller row(s)")
        loads, relabel, names = self.loads(warnings)
        if "success" not in self.columns:
            warnings.append("no 'success' column: every sample counted as successful")
        return ParsedFile(
            tool="jmeter", format="jmeter-csv", loads=loads,
            meta={"thread_groups": names, "columns": list(columns), "header": has_header, "relabel": relabel},
            warnings=warnings,
        )

    def loads(self, warnings: list[str]) -> tuple[dict[str, LoadSpec], dict[str, str], dict[str, str]]:
        """(load_key -> LoadSpec, thread group -> load_key, load_key -> thread group name).

        A group's load level is the most threads it had active (grpThreads), or, without that
        column, how many distinct threads ran."""
        if "threadName" not in self.columns:
            load = self.options.load or _threads_load(self.grp.get(""))
            return {load.key: load}, {"": load.key}, {load.key: ""}
        group_load: dict[str, LoadSpec] = {}
        for group, threads in self.threads.items():
            grp = self.grp.get(group)
            group_load[group] = _threads_load(grp if grp is not None else len(threads))
        if len(group_load) == 1 and self.options.load is not None:
            group_load = {g: self.options.load for g in group_load}
        loads: dict[str, LoadSpec] = {}
        names: dict[str, str] = {}
        for group in sorted(group_load):
            key = group_load[group].key
            loads[key] = group_load[group]
            if key in names:
                warnings.append(f"thread groups '{names[key]}' and '{group}' both ran "
                                f"{group_load[group].label}: their samples share one load level")
                names[key] = f"{names[key]} + {group}"
            else:
                names[key] = group
        return loads, {g: spec.key for g, spec in group_load.items()}, names


def thread_group_loads(
    df: pl.DataFrame, options: ParseOptions, warnings: list[str],
) -> tuple[dict[str, LoadSpec], dict[str, str], dict[str, str]]:
    """(load_key -> LoadSpec, threadName -> load_key, load_key -> thread group name) of samples held
    in memory (JMeter XML), by the rules of `_State`."""
    state = _State(options, tuple(df.columns))
    state.samples_groups(df)
    loads, relabel, names = state.loads(warnings)
    return loads, {t: relabel[g] for t, g in state.group_of.items()}, names


def _no_nulls(df: pl.DataFrame, col: str, fill: object = "") -> pl.Expr:
    """fill_null copies the column; only pay for it when there is a null."""
    return pl.col(col).fill_null(fill) if df[col].null_count() else pl.col(col)


def _threads_load(value: int | None) -> LoadSpec:
    return LoadSpec("threads", float(value)) if value else NONE_LOAD

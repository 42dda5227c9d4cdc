"""JMeter CSV JTL (`-l file.jtl`, Simple Data Writer), every column set JMeter and Taurus write.

Read with polars (a 1M-row file in a fraction of a second); only when polars refuses a file or a
required value is missing do we re-read it with the csv module, to name the exact line and column.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import polars as pl

from ..model import NONE_LOAD, SAMPLE_SCHEMA, LoadSpec, ParsedFile, ParseError, ParseOptions
from ..textio import GZIP_MAGIC, decode, read_bytes, read_head

# Default column sets of header-less files, by column count (JMeter <= 2.11 and 2.12-2.13).
HEADERLESS_COLUMNS: dict[int, tuple[str, ...]] = {
    10: ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName",
         "dataType", "success", "bytes", "Latency"),
    12: ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName",
         "dataType", "success", "bytes", "grpThreads", "allThreads", "Latency"),
}
KNOWN_COLUMNS = frozenset({
    "timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType",
    "success", "failureMessage", "bytes", "sentBytes", "grpThreads", "allThreads", "URL", "Filename",
    "Latency", "Encoding", "SampleCount", "ErrorCount", "Hostname", "IdleTime", "Connect",
})
DELIMITERS = (",", "\t", ";", "|")
INT_COLUMNS = ("timeStamp", "elapsed", "bytes", "grpThreads")
TRANSACTION_PREFIX = "Number of samples in transaction"
EMPTY_TRANSACTION_PREFIX = "Number of samples in transaction : 0,"
# "<Thread Group name> <group#>-<thread#>" (JMeter's JMeterThread naming).
THREAD_NAME = re.compile(r"^(.*?)\s*(\d+)-(\d+)$")


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
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
    source: Path | io.BytesIO = path
    if needs_recode:
        source = io.BytesIO(decode(read_bytes(path))[0].encode("utf-8"))
    try:
        df = _read(source, delimiter, columns, has_header, wanted)
    except pl.exceptions.PolarsError as exc:
        _locate_error(path, delimiter, columns, has_header)
        text, full_encoding = decode(read_bytes(path))
        if needs_recode or full_encoding == "utf-8":
            raise ParseError(f"unreadable CSV: {str(exc).splitlines()[0]}") from exc
        # The head was UTF-8 but a later part is not (e.g. a GBK label): read the decoded text.
        df = _read(io.BytesIO(text.encode("utf-8")), delimiter, columns, has_header, wanted)
    if df.height == 0:
        raise ParseError(f"{path.name} has a header but no samples", line=2)
    required = [c for c in ("timeStamp", "elapsed", "success") if c in wanted]
    if df.select(pl.any_horizontal(pl.col(required).is_null()).any()).item():
        _locate_error(path, delimiter, columns, has_header)
        raise ParseError("a sample lacks timeStamp, elapsed or success")
    if not gzipped:
        _check_tail(path, delimiter, len(columns))
    return _to_parsed(df, options, columns, has_header)


def _read(source: Path | io.BytesIO, delimiter: str, columns: tuple[str, ...], has_header: bool,
          wanted: list[str]) -> pl.DataFrame:
    ints = [c for c in INT_COLUMNS if c in wanted]
    if has_header:
        # scan + select pushes the projection down: faster and ~25% less memory than
        # read_csv(columns=...) on a 1M-row file.
        return pl.scan_csv(source, separator=delimiter, schema_overrides={c: pl.Int64 for c in ints},
                           infer_schema=False, quote_char='"').select(wanted).collect()
    # Header-less files are old and small: read as text, then type the columns we need.
    return pl.read_csv(source, separator=delimiter, has_header=False, new_columns=list(columns),
                       infer_schema=False, quote_char='"',
                       ).select(wanted).with_columns(pl.col(ints).cast(pl.Int64))


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
                f"header-less JMeter CSV with {len(fields)} columns: only the JMeter <= 2.13 defaults "
                "(10 or 12 columns) are known; give the column names (jmeter.properties "
                "save-service settings) or write the file with a header", line=1)
    raise ParseError(
        f"cannot find the delimiter: line 1 {first_line[:120]!r} has no JMeter column names when split "
        "by ',', tab, ';' or '|' (wrong delimiter or not a JMeter CSV)", line=1)


def _locate_error(path: Path, delimiter: str, columns: tuple[str, ...], has_header: bool) -> None:
    """Re-read with the csv module and raise a ParseError at the first bad line, if any."""
    text = decode(read_bytes(path))[0]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"')
    index = {c: i for i, c in enumerate(columns)}
    line_end = 0
    rows = iter(reader)
    if has_header:
        next(rows, None)
        line_end = reader.line_num
    last_line = text.rstrip("\n").count("\n") + 1
    for row in rows:
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
            elif line_end >= last_line and len(row) < len(columns):
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
            if not re.fullmatch(r"-?\d+", value):
                hint = ""
                if name == "timeStamp":
                    hint = " (formatted timestamps are not supported: set " \
                           "jmeter.save.saveservice.timestamp_format=ms)"
                raise ParseError(f"column '{name}': {value!r} is not a number{hint}",
                                 line=line, field=name)
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


def _to_parsed(df: pl.DataFrame, options: ParseOptions, columns: tuple[str, ...],
               has_header: bool) -> ParsedFile:
    warnings: list[str] = []
    is_tx = pl.lit(False)
    if "responseMessage" in df.columns:
        # starts_with on a null is null, and filter/sum treat null as false: no fill_null copy.
        msg = pl.col("responseMessage")
        empty_tx = int(df.select(msg.str.starts_with(EMPTY_TRANSACTION_PREFIX).sum()).item())
        if empty_tx:
            # JMeter's report generator skips empty controllers everywhere; so do we.
            df = df.filter(~msg.str.starts_with(EMPTY_TRANSACTION_PREFIX).fill_null(False))
            warnings.append(f"skipped {empty_tx} empty Transaction Controller row(s)")
        is_tx = msg.str.starts_with(TRANSACTION_PREFIX).fill_null(False)

    loads, key_of_thread, group_names = _thread_group_loads(df, options, warnings)
    if "threadName" in df.columns and len(key_of_thread) > 1:
        load_expr = pl.col("threadName").fill_null("").replace_strict(
            key_of_thread, return_dtype=pl.String)
    else:
        load_expr = pl.lit(next(iter(loads)))

    ts = pl.col("timeStamp")
    start = ts if options.timestamp_is_start else ts - pl.col("elapsed")
    success = pl.col("success").is_in(["true", "True", "TRUE"]) if "success" in df.columns \
        else pl.lit(True)
    if "success" not in df.columns:
        warnings.append("no 'success' column: every sample counted as successful")
    samples = df.select(
        _no_nulls(df, "label").alias("scenario") if "label" in df.columns
        else pl.lit("(unlabelled)").alias("scenario"),
        load_expr.alias("load_key"),
        start.alias("start_ms"),
        (pl.col("elapsed") * 1000).alias("latency_us"),
        success.alias("success"),
        _no_nulls(df, "bytes", 0).alias("bytes") if "bytes" in df.columns
        else pl.lit(0, dtype=pl.Int64).alias("bytes"),
        is_tx.alias("is_transaction"),
    ).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(
        tool="jmeter", format="jmeter-csv", samples=samples, loads=loads,
        meta={"thread_groups": group_names, "columns": list(columns), "header": has_header},
        warnings=warnings,
    )


def _thread_group_loads(
    df: pl.DataFrame, options: ParseOptions, warnings: list[str],
) -> tuple[dict[str, LoadSpec], dict[str, str], dict[str, str]]:
    """(load_key -> LoadSpec, threadName -> load_key, load_key -> thread group name).

    Thread group = threadName minus its trailing " <group#>-<thread#>". Its load level is the most
    threads it had active (grpThreads), or, without that column, how many distinct threads ran."""
    if "threadName" not in df.columns:
        load = options.load or _threads_load(_max_or_none(df, "grpThreads"))
        return {load.key: load}, {}, {load.key: ""}
    aggs = [pl.len().alias("n")]
    if "grpThreads" in df.columns:
        aggs.append(pl.col("grpThreads").max().alias("grp"))
    per_thread = df.group_by(pl.col("threadName").fill_null("")).agg(aggs)
    groups: dict[str, dict[str, object]] = {}
    group_of: dict[str, str] = {}
    for row in per_thread.iter_rows(named=True):
        name = row["threadName"]
        m = THREAD_NAME.match(name)
        group, thread = (m.group(1), f"{m.group(2)}-{m.group(3)}") if m else (name, name)
        group_of[name] = group
        g = groups.setdefault(group, {"threads": set(), "grp": None})
        g["threads"].add(thread)  # type: ignore[union-attr]
        grp = row.get("grp")
        if grp is not None and (g["grp"] is None or grp > g["grp"]):  # type: ignore[operator]
            g["grp"] = grp
    group_load: dict[str, LoadSpec] = {}
    for group, g in groups.items():
        value = g["grp"] if g["grp"] is not None else len(g["threads"])  # type: ignore[arg-type]
        group_load[group] = _threads_load(value)  # type: ignore[arg-type]
    if len(groups) == 1 and options.load is not None:
        group_load = {g: options.load for g in groups}
    loads: dict[str, LoadSpec] = {}
    names: dict[str, str] = {}
    for group in sorted(groups):
        key = group_load[group].key
        loads[key] = group_load[group]
        if key in names:
            warnings.append(f"thread groups '{names[key]}' and '{group}' both ran "
                            f"{group_load[group].label}: their samples share one load level")
            names[key] = f"{names[key]} + {group}"
        else:
            names[key] = group
    key_of_thread = {t: group_load[g].key for t, g in group_of.items()}
    return loads, key_of_thread, names


def _no_nulls(df: pl.DataFrame, col: str, fill: object = "") -> pl.Expr:
    """fill_null copies the column; only pay for it when there is a null."""
    return pl.col(col).fill_null(fill) if df[col].null_count() else pl.col(col)


def _max_or_none(df: pl.DataFrame, col: str) -> int | None:
    if col not in df.columns:
        return None
    v = df.select(pl.col(col).max()).item()
    return int(v) if v is not None else None


def _threads_load(value: int | None) -> LoadSpec:
    return LoadSpec("threads", float(value)) if value else NONE_LOAD

"""JMeter XML JTL, stream-parsed: only top-level samples count; nested sub-results (embedded
resources, redirects, Transaction Controller children) are part of their parent sample."""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl

from ..model import SAMPLE_SCHEMA, ParsedFile, ParseError, ParseOptions
from ..textio import GZIP_MAGIC
from .jmeter_csv import EMPTY_TRANSACTION_PREFIX, TRANSACTION_PREFIX, thread_group_loads

SAMPLE_TAGS = {"httpSample", "sample"}


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    if path.stat().st_size == 0:
        raise ParseError(f"{path.name} is empty")
    rows: dict[str, list[object]] = {k: [] for k in
                                     ("ts", "t", "lb", "rm", "tn", "s", "by", "ng")}
    depth = 0
    skipped_empty_tx = 0
    parser = ET.XMLPullParser(events=("start", "end"))
    root_seen = False
    try:
        with path.open("rb") as raw:
            gzipped = raw.read(2) == GZIP_MAGIC
        with (gzip.open(path, "rb") if gzipped else path.open("rb")) as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                parser.feed(chunk)
                for event, elem in parser.read_events():
                    if event == "start":
                        if not root_seen:
                            root_seen = True
                            if elem.tag != "testResults":
                                raise ParseError(f"root element is <{elem.tag}>, expected "
                                                 "<testResults> (not a JMeter XML JTL)")
                        if elem.tag in SAMPLE_TAGS:
                            depth += 1
                            if depth == 1:
                                skipped_empty_tx += _take(elem, rows)
                    elif elem.tag in SAMPLE_TAGS:
                        depth -= 1
                        if depth == 0:
                            elem.clear()  # keep memory flat on huge files with response data
            parser.close()
    except ET.ParseError as exc:
        line, _col = exc.position
        raise ParseError(f"malformed XML: {exc}", line=line) from exc
    if not rows["t"]:
        raise ParseError(f"{path.name} contains no samples")
    start = pl.Series(rows["ts"], dtype=pl.Int64)
    elapsed = pl.Series(rows["t"], dtype=pl.Int64)
    df = pl.DataFrame({
        "label": rows["lb"], "responseMessage": rows["rm"], "threadName": rows["tn"],
        "grpThreads": pl.Series(rows["ng"], dtype=pl.Int64),
    })
    if all(v is None for v in rows["ng"]):
        df = df.drop("grpThreads")
    warnings: list[str] = []
    if skipped_empty_tx:
        warnings.append(f"skipped {skipped_empty_tx} empty Transaction Controller sample(s)")
    loads, key_of_thread, names = thread_group_loads(df, options, warnings)
    if len(key_of_thread) > 1:
        load_key = df["threadName"].fill_null("").replace_strict(key_of_thread,
                                                                return_dtype=pl.String)
    else:
        load_key = pl.Series([next(iter(loads))] * df.height)
    if not options.timestamp_is_start:
        start = start - elapsed
    samples = pl.DataFrame({
        "scenario": df["label"].fill_null(""),
        "load_key": load_key,
        "start_ms": start,
        "latency_us": elapsed * 1000,
        "success": pl.Series(rows["s"], dtype=pl.Boolean),
        "bytes": pl.Series(rows["by"], dtype=pl.Int64),
        "is_transaction": df["responseMessage"].fill_null("").str.starts_with(TRANSACTION_PREFIX),
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="jmeter", format="jmeter-xml", samples=samples, loads=loads,
                      meta={"thread_groups": names}, warnings=warnings)


def _take(elem: ET.Element, rows: dict[str, list[object]]) -> int:
    a = elem.attrib
    rm = a.get("rm", "")
    if rm.startswith(EMPTY_TRANSACTION_PREFIX):
        return 1
    for attr in ("t", "ts"):
        value = a.get(attr)
        if value is None or not value.lstrip("-").isdigit():
            raise ParseError(f"<{elem.tag} lb={a.get('lb', '')!r}>: attribute '{attr}' is "
                             f"{value!r}, not a number", field=attr)
    rows["t"].append(int(a["t"]))
    rows["ts"].append(int(a["ts"]))
    rows["lb"].append(a.get("lb", ""))
    rows["rm"].append(rm)
    rows["tn"].append(a.get("tn", ""))
    rows["s"].append(a.get("s", "true").lower() == "true")
    by = a.get("by", "0")
    rows["by"].append(int(by) if by.isdigit() else 0)
    ng = a.get("ng")
    rows["ng"].append(int(ng) if ng and ng.isdigit() else None)
    return 0

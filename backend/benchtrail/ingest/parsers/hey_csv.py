"""hey `-o csv`: one row per successful request (hey drops failed ones), times in seconds with
0.1 ms resolution, `offset` = start in seconds since the run began, rows in completion order."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl

from ..model import NONE_LOAD, RELATIVE_TIME, SAMPLE_SCHEMA, ParsedFile, ParseError, ParseOptions
from ..textio import read_text


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    text = read_text(path)
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    if not header or header[0] != "response-time":
        raise ParseError(f"expected a hey CSV header starting 'response-time', got {header[:3]!r}",
                         line=1)
    idx = {name: i for i, name in enumerate(header)}
    lat, start, ok = [], [], []
    for row in reader:
        n = reader.line_num
        if not row:
            continue
        if len(row) != len(header):
            raise ParseError(f"{len(row)} field(s) where the header has {len(header)}", line=n)
        try:
            lat.append(round(float(row[0]) * 1_000_000))
        except ValueError:
            raise ParseError(f"{row[0]!r} is not a number", line=n, field="response-time") from None
        if "offset" in idx:
            try:
                start.append(round(float(row[idx["offset"]]) * 1000))
            except ValueError:
                raise ParseError(f"{row[idx['offset']]!r} is not a number", line=n,
                                 field="offset") from None
        if "status-code" in idx:
            code = row[idx["status-code"]]
            if not code.isdigit():
                raise ParseError(f"{code!r} is not a status code", line=n, field="status-code")
            ok.append(int(code) < 400)
        else:
            ok.append(True)
    if not lat:
        raise ParseError("hey CSV has a header but no rows", line=2)
    warnings = ["hey CSV lists successful requests only: transport errors are not in the file"]
    if not start:
        start = [0] * len(lat)
        warnings.append("no 'offset' column (hey < 2018): start times unknown, series are meaningless")
    load = options.load or NONE_LOAD
    samples = pl.DataFrame({
        "scenario": [options.scenario or "default"] * len(lat),
        "load_key": [load.key] * len(lat),
        # offsets count from hey's start; the upload's `started_ms` places the series in time.
        "start_ms": start,
        "latency_us": lat,
        "success": ok,
        "bytes": [0] * len(lat),
        "is_transaction": [False] * len(lat),
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]
    return ParsedFile(tool="hey", format="hey-csv", samples=samples, loads={load.key: load},
                      meta={"time_base": RELATIVE_TIME}, warnings=warnings)

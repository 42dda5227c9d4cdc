"""Reading the tools' raw outputs back, only as far as running them needs: did the tool work (not
every request failed), live progress (count, errors, rate) and the time window that trims resource
samples. No latency statistic, criterion or validity check is computed here: ingest reads the uploaded
files for those (`benchtrail.ingest`), for runner runs and uploads alike."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np


@dataclass
class OutputSummary:
    count: int                  # requests sent (hey: rows plus the requests without a response)
    errors: int                 # failed requests (HTTP >= 400 or transport errors where recorded)
    span_s: float               # first request start -> last response end
    first_failure: str | None = None
    window: tuple[float, float] | None = None   # epoch s of first start and last end, when known

    @property
    def achieved_rate(self) -> float:
        return self.count / self.span_s if self.span_s > 0 else 0.0

    @property
    def error_rate_pct(self) -> float:
        return 100.0 * self.errors / self.count if self.count else 100.0


def _csv_columns(path: Path, wanted: tuple[str, ...]) -> dict[str, list[str]]:
    """The named columns of a CSV file with a header row (by name: tools add and reorder columns)."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        missing = [w for w in wanted if w not in header]
        if missing:
            raise ValueError(f"{path.name}: no column(s) {', '.join(missing)} in the header {header}")
        index = [header.index(w) for w in wanted]
        columns: list[list[str]] = [[] for _ in wanted]
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            try:
                for col, i in zip(columns, index, strict=True):
                    col.append(row[i])
            except IndexError:
                raise ValueError(f"{path.name} line {line}: {len(row)} fields, the header has {len(header)}") from None
    return dict(zip(wanted, columns, strict=True))


def jmeter_jtl(path: Path) -> OutputSummary:
    """A CSV JTL with a header row (what the runner asks JMeter to write). Transaction Controller
    parent rows are excluded like JMeter's own report does."""
    cols = _csv_columns(path, ("timeStamp", "elapsed", "success", "responseMessage", "responseCode"))
    keep = [i for i, m in enumerate(cols["responseMessage"]) if not m.startswith("Number of samples in transaction")]
    if not keep:
        return OutputSummary(0, 0, 0.0)
    ts = np.array([int(cols["timeStamp"][i]) for i in keep], dtype=np.int64)
    el = np.array([int(cols["elapsed"][i]) for i in keep], dtype=np.int64)
    ok = np.array([cols["success"][i].lower() == "true" for i in keep], dtype=bool)
    first = None
    if not ok.all():
        j = keep[int(np.argmin(ok))]
        first = f"{cols['responseCode'][j]} {cols['responseMessage'][j]}"
    # timeStamp is the sample start: the shipped jmeter.properties sets sampleresult.timestamp.start.
    span = (float((ts + el).max()) - float(ts.min())) / 1000.0
    return OutputSummary(count=len(keep), errors=int((~ok).sum()), span_s=span, first_failure=first,
                         window=(float(ts.min()) / 1000.0, float((ts + el).max()) / 1000.0))


def hey_csv(path: Path, requested: int | None = None) -> OutputSummary:
    """hey -o csv: one row per request that got a response (transport failures are dropped, so with
    -n the missing rows are the transport errors); seconds with 0.1 ms resolution; unsorted."""
    cols = _csv_columns(path, ("response-time", "status-code", "offset"))
    rows = len(cols["offset"])
    if rows == 0:
        return OutputSummary(requested or 0, requested or 0, 0.0, first_failure="no request got a response")
    rt = np.array(cols["response-time"], dtype=np.float64)
    off = np.array(cols["offset"], dtype=np.float64)
    status = np.array(cols["status-code"], dtype=np.int64)
    http_errors = int((status >= 400).sum())
    missing = max(0, (requested or rows) - rows)
    first = None
    if missing:
        first = f"{missing} request(s) failed without a response"
    elif http_errors:
        first = f"HTTP {int(status[status >= 400][0])}"
    span = float((off + rt).max() - off.min())
    return OutputSummary(count=rows + missing, errors=http_errors + missing, span_s=span, first_failure=first)


def _k6_time(text: str) -> float:
    # RFC 3339 with nanoseconds and a local offset; datetime keeps microseconds.
    head, _, rest = text.partition(".")
    frac = ""
    tz = ""
    for i, ch in enumerate(rest):
        if not ch.isdigit():
            frac, tz = rest[:i], rest[i:]
            break
    else:
        frac = rest
    iso = f"{head}.{(frac + '000000')[:6]}{tz}" if rest else head
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def k6_ndjson(path: Path) -> OutputSummary:
    """k6 --out json: http_req_duration points give the count and the time window (the resource
    samples are trimmed to it), http_req_failed points (1 = failed) the errors. Only the lines of
    those two metrics are decoded."""
    starts: list[float] = []
    lat: list[float] = []
    errors = 0
    first = None
    with open(path, "rb") as f:
        for line in f:
            if b'"type":"Point"' not in line:
                continue
            if b'"metric":"http_req_duration"' in line:
                d = json.loads(line)["data"]
                end = _k6_time(d["time"])
                lat.append(float(d["value"]))
                starts.append(end - float(d["value"]) / 1000.0)
            elif b'"metric":"http_req_failed"' in line:
                d = json.loads(line)["data"]
                if d["value"]:
                    errors += 1
                    if first is None:
                        tags = d.get("tags", {})
                        first = f"status {tags.get('status', '?')} error_code {tags.get('error_code', '?')}"
    if not lat:
        return OutputSummary(0, 0, 0.0)
    # The point's time is when k6 recorded the sample (the end of the request).
    s = np.asarray(starts)
    lat_ms = np.asarray(lat)
    span = float((s + lat_ms / 1000.0).max() - s.min())
    return OutputSummary(count=len(lat), errors=errors, span_s=span, first_failure=first,
                         window=(float(s.min()), float((s + lat_ms / 1000.0).max())))


"""Reading the tools' raw outputs back, only as far as running them needs: did the tool work (not
every request failed), live progress (count, errors, rate) and the time window that trims resource
samples. No latency statistic, criterion or validity check is computed here: ingest reads the uploaded
files for those (`benchtrail.ingest`), for runner runs and uploads alike."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl


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


def jmeter_jtl(path: Path) -> OutputSummary:
    """A CSV JTL with a header row (what the runner asks JMeter to write). Transaction Controller
    parent rows are excluded like JMeter's own report does."""
    df = pl.read_csv(path, columns=["timeStamp", "elapsed", "success", "responseMessage", "responseCode"],
                     schema_overrides={"responseCode": pl.String, "responseMessage": pl.String,
                                       "success": pl.String},
                     infer_schema_length=100)
    df = df.filter(~pl.col("responseMessage").fill_null("").str.starts_with("Number of samples in transaction"))
    if df.height == 0:
        return OutputSummary(0, 0, 0.0)
    ok = df["success"].str.to_lowercase() == "true"
    ts = df["timeStamp"].cast(pl.Int64).to_numpy()
    el = df["elapsed"].cast(pl.Int64).to_numpy()
    failed = df.filter(~ok)
    first = None
    if failed.height:
        first = f"{failed['responseCode'][0]} {failed['responseMessage'][0]}"
    # timeStamp is the sample start: the shipped jmeter.properties sets sampleresult.timestamp.start.
    span = (float((ts + el).max()) - float(ts.min())) / 1000.0
    return OutputSummary(count=df.height, errors=int((~ok).sum()), span_s=span, first_failure=first,
                         window=(float(ts.min()) / 1000.0, float((ts + el).max()) / 1000.0))


def hey_csv(path: Path, requested: int | None = None) -> OutputSummary:
    """hey -o csv: one row per request that got a response (transport failures are dropped, so with
    -n the missing rows are the transport errors); seconds with 0.1 ms resolution; unsorted."""
    df = pl.read_csv(path, schema_overrides={"status-code": pl.Int64})
    if df.height == 0:
        return OutputSummary(requested or 0, requested or 0, 0.0, first_failure="no request got a response")
    rt = df["response-time"].to_numpy()
    off = df["offset"].to_numpy()
    status = df["status-code"].to_numpy()
    http_errors = int((status >= 400).sum())
    missing = max(0, (requested or df.height) - df.height)
    first = None
    if missing:
        first = f"{missing} request(s) failed without a response"
    elif http_errors:
        first = f"HTTP {int(status[status >= 400][0])}"
    span = float((off + rt).max() - off.min())
    return OutputSummary(count=df.height + missing, errors=http_errors + missing, span_s=span, first_failure=first)


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


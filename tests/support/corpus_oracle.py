"""What each genuine result file of the corpus says, read by small readers of our own that share no code with
the product (csv/json/re/ElementTree + numpy): the oracle of tests/unit/ingest/test_corpus.py.

A corpus file is classified by its folder (`<format-dir>/...`, the folders of `shared/fixtures/real` and
`tests/corpus`); the oracle of that folder computes, from the raw file:

- sample files (JMeter CSV/XML, Gatling text logs, k6 --out json/csv, hey -o csv): per scenario the count,
  errors, mean, min and max of the latencies (exact) and their nearest-rank p50/p99 (rank ceil(p·n/100));
- summaries (hey, wrk, Locust, k6 summaries): the totals the tool printed (wrk's "N requests in" and
  "Requests/sec", hey's status and error distributions and "Requests/sec", Locust's Aggregated row, k6's
  http_reqs and http_req_duration), and the errors beside them;
- micro-benchmark files (JMH, go test -bench, pytest-benchmark, Google Benchmark, Criterion, hyperfine,
  BMF, histories): every score the tool wrote (means of repetitions where it wrote repetitions), as a sorted
  list per measure.

A file that is not a result file (Locust's failure and exception lists) is expected refused, with the reason.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

# folder -> the format detection must give (None: decided per file below)
FORMAT_OF_DIR: dict[str, str | None] = {
    "jmeter-csv": "jmeter-csv", "jmeter-xml": "jmeter-xml", "hey-text": "hey-text", "hey-csv": "hey-csv",
    "wrk-text": "wrk-text", "jmh-json": "jmh-json", "jmh-text": "jmh-text",
    "k6-summary-export": "k6-summary-export", "k6-handlesummary-json": "k6-handlesummary",
    "k6-json-output": "k6-json", "k6-csv-output": "k6-csv", "locust-csv": None,
    "gatling-simulation-log": "gatling-log", "gatling-stats-json": "gatling-stats-json",
    "go-bench": "go-bench", "pytest-benchmark": "pytest-benchmark", "google-benchmark": "google-benchmark",
    "criterion": None, "hyperfine": "hyperfine", "bmf": "bmf", "gab-history": "gab-history",
    "bencher-reports": "bencher-reports",
}
NOT_RESULT_FILES = {"locust-failures": "holds no measurements", "locust-exceptions": "holds no measurements"}
TX_PREFIX = "Number of samples in transaction"


@dataclass
class Expected:
    format: str
    refused: str | None = None                                   # a reason the refusal must give
    scenarios: dict[str, dict[str, float]] = field(default_factory=dict)   # sample files, per scenario
    total: int | None = None                                     # sample files: non-transaction samples
    reported: dict[str, float] = field(default_factory=dict)     # summaries: the printed totals
    scores: dict[str, list[float]] = field(default_factory=dict) # micro-benchmarks: mode -> sorted scores
    whole: dict[str, float] = field(default_factory=dict)       # sample files: every non-transaction sample
    check_names: bool = True                                     # scenario names are the file's labels
    series_points: int | None = None                             # Locust history: points of its throughput
    entries: int | None = None                                   # histories: runs


def nearest_rank(values: Any, p: float) -> float:
    ordered = np.sort(np.asarray(values, dtype=float))
    rank = math.ceil(Fraction(str(p)) * len(ordered) / 100)
    return float(ordered[max(rank, 1) - 1])


def _sample_stats(latencies_ms: list[float], errors: int) -> dict[str, float]:
    a = np.asarray(latencies_ms, dtype=float)
    return {"count": float(len(a)), "errors": float(errors), "latency_mean": float(a.sum() / len(a)),
            "latency_min": float(a.min()), "latency_max": float(a.max()),
            "latency_p50": nearest_rank(a, 50), "latency_p99": nearest_rank(a, 99)}


def _from_samples(fmt: str, rows: list[tuple[str, float, bool, bool]]) -> Expected:
    """rows: (scenario, latency ms, success, is transaction parent)."""
    by: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for scenario, latency, ok, _ in rows:
        by[scenario].append((latency, ok))
    plain = [(v, ok) for _, v, ok, tx in rows if not tx]
    return Expected(fmt, scenarios={s: _sample_stats([v for v, _ in r], sum(1 for _, ok in r if not ok))
                                    for s, r in by.items()},
                    total=len(plain),
                    whole=_sample_stats([v for v, _ in plain], sum(1 for _, ok in plain if not ok)) if plain else {})


def _text(path: Path) -> str:
    raw = path.read_bytes()
    for enc in ("utf-8-sig", "gb18030", "latin-1"):
        try:
            return raw.decode(enc).replace("\r\r\n", "\n").replace("\r\n", "\n")
        except UnicodeDecodeError:
            continue
    raise AssertionError("unreachable")


# ------------------------------------------------------------------------------------------------- JMeter

_HEADERLESS = {10: "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,bytes,Latency",
               12: "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,bytes,grpThreads,"
                   "allThreads,Latency",
               17: "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,"
                   "bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect"}


def jmeter_csv(path: Path) -> Expected:
    text = _text(path)
    first = text.split("\n", 1)[0]
    delimiter = max(",\t;|", key=lambda d: first.count(d))
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    if "elapsed" in rows[0]:
        header, body = rows[0], rows[1:]
    else:
        header, body = _HEADERLESS[len(rows[0])].split(","), rows
    out = []
    for r in body:
        if not r:
            continue
        rec = dict(zip(header, r))
        msg = rec.get("responseMessage") or ""
        if msg.startswith(TX_PREFIX + " : 0,"):
            continue
        ok = (rec.get("success") or "true").lower() == "true"
        out.append((rec.get("label", "(unlabelled)"), float(int(rec["elapsed"])), ok, msg.startswith(TX_PREFIX)))
    return _from_samples("jmeter-csv", out)


def jmeter_xml(path: Path) -> Expected:
    out = []
    root = ET.parse(path).getroot()
    for el in root:
        if el.tag not in ("httpSample", "sample"):
            continue
        msg = el.get("rm") or ""
        if msg.startswith(TX_PREFIX + " : 0,"):
            continue
        out.append((el.get("lb") or "", float(int(el.get("t") or 0)), (el.get("s") or "true") == "true",
                    msg.startswith(TX_PREFIX)))
    return _from_samples("jmeter-xml", out)


# ------------------------------------------------------------------------------------------------ Gatling

def _gatling_binary(raw: bytes) -> list[tuple[str, float, bool, bool]]:
    """Gatling >= 3.13's binary records, as its LogFileDataWriter writes them (big-endian; strings = int length,
    compact-string bytes, coder byte; cached strings = int index, > 0 when the string follows)."""
    import struct
    pos = 0
    cache: dict[int, str] = {}

    def unpack(fmt: str) -> Any:
        nonlocal pos
        (v,) = struct.unpack_from(fmt, raw, pos)
        pos += struct.calcsize(fmt)
        return v

    def string() -> str:
        nonlocal pos
        n = unpack(">i")
        if not n:
            return ""
        b, coder = raw[pos:pos + n], raw[pos + n]
        pos += n + 1
        return b.decode("utf-16-le" if coder else "latin-1")

    def cached() -> str:
        i = unpack(">i")
        if i > 0:
            cache[i] = string()
        return cache[abs(i)]

    assert unpack(">b") == 0
    string(), string(), unpack(">q"), string()
    for _ in range(unpack(">i")):
        string()
    for _ in range(unpack(">i")):
        n = unpack(">i")
        pos += n
    rows = []
    while pos < len(raw):
        kind = unpack(">b")
        if kind == 1:
            groups = [cached() for _ in range(unpack(">i"))]
            name = cached()
            t0, t1, ok = unpack(">i"), unpack(">i"), unpack(">b")
            cached()
            rows.append((" / ".join([*groups, name]), float(t1 - t0), ok == 1, False))
        elif kind == 2:
            pos += 4 + 1 + 4
        elif kind == 3:
            for _ in range(unpack(">i")):
                cached()
            pos += 4 * 3 + 1
        elif kind == 4:
            cached()
            pos += 4
        else:
            raise AssertionError(f"record kind {kind} at {pos - 1}")
    return rows


def gatling_log(path: Path) -> Expected:
    raw = path.read_bytes()
    if raw[:1] == b"\x00":
        return _from_samples("gatling-log", _gatling_binary(raw))
    rows = []
    for line in _text(path).split("\n"):
        f = line.split("\t")
        if f[0] != "REQUEST":
            continue
        # the start, end and status fields: the last "digits digits OK|KO" triple
        i = max(j for j in range(len(f) - 2) if f[j].isdigit() and f[j + 1].isdigit() and f[j + 2] in ("OK", "KO"))
        groups = f[i - 2] if i >= 3 else ""
        name = f[i - 1]
        scenario = f"{groups.replace(',', ' / ')} / {name}" if groups else name
        rows.append((scenario, float(int(f[i + 1]) - int(f[i])), f[i + 2] == "OK", False))
    return _from_samples("gatling-log", rows)


# -------------------------------------------------------------------------------------------------- k6

def _k6_ok(tags: dict[str, Any]) -> bool:
    if "expected_response" in tags and tags["expected_response"] not in (None, ""):
        return str(tags["expected_response"]) == "true"
    status = str(tags.get("status", ""))
    return status.isdigit() and 0 < int(status) < 400


def k6_json(path: Path) -> Expected:
    rows = []
    for line in _text(path).split("\n"):
        if not line.strip():
            continue
        obj = json.loads(line)
        if obj.get("type") == "Point" and obj.get("metric") == "http_req_duration":
            tags = obj["data"].get("tags") or {}
            rows.append((tags.get("name") or tags.get("url") or "default", round(obj["data"]["value"] * 1000) / 1000,
                         _k6_ok(tags), False))
    return _from_samples("k6-json", rows)


def k6_csv(path: Path) -> Expected:
    rows = []
    for rec in csv.DictReader(io.StringIO(_text(path))):
        if rec["metric_name"] == "http_req_duration":
            rows.append((rec.get("name") or rec.get("url") or "default",
                         round(float(rec["metric_value"]) * 1000) / 1000, _k6_ok(rec), False))
    return _from_samples("k6-csv", rows)


def k6_summary(path: Path, fmt: str) -> Expected:
    data = json.loads(_text(path))
    metrics = data["metrics"]

    def values(name: str) -> dict[str, Any]:
        m = metrics.get(name) or {}
        return m.get("values", m)

    exp = Expected(fmt)
    for trend in ("http_req_duration", "browser_http_req_duration", "grpc_req_duration", "ws_session_duration",
                  "iteration_duration"):
        if trend in metrics:
            t = values(trend)
            exp.reported.update({k: float(t[s]) for s, k in (("avg", "latency_mean"), ("min", "latency_min"),
                                                               ("max", "latency_max"), ("p(95)", "latency_p95"))
                                 if isinstance(t.get(s), (int, float))})
            break
    if "http_reqs" in metrics and trend == "http_req_duration":
        exp.reported["count"] = float(values("http_reqs")["count"])
        exp.reported["throughput"] = float(values("http_reqs")["rate"])
    failed = values("http_req_failed") if "http_req_failed" in metrics and trend == "http_req_duration" else {}
    if failed:
        exp.reported["errors"] = float(failed.get("passes", 0))
    return exp


# ------------------------------------------------------------------------------------------------- hey

def hey_text(path: Path) -> Expected:
    """Every `Summary:` block (a markdown file may hold several): Requests/sec, Average, and the count =
    responses of every status + errors of the error distribution; errors = statuses >= 400 + those errors."""
    text = _text(path)
    exp = Expected("hey-text")
    blocks = text.split("Summary:")[1:]
    counts, errors, rps = [], [], []
    for block in blocks:
        statuses = [(int(c), int(n)) for c, n in re.findall(r"^\s*\[(\d{3})\]\s+(\d+) responses", block, re.M)]
        errs = [int(n) for n in re.findall(r"^\s*\[(\d+)\]\t", block.split("Error distribution:")[1], re.M)] \
            if "Error distribution:" in block else []
        counts.append(sum(n for _, n in statuses) + sum(errs))
        errors.append(sum(n for c, n in statuses if c >= 400) + sum(errs))
        rps.append(float(re.search(r"Requests/sec:\s+([\d.]+)", block).group(1)))  # type: ignore[union-attr]
    exp.scores = {"count": sorted(float(c) for c in counts), "errors": sorted(float(e) for e in errors),
                  "throughput": sorted(rps)}
    return exp


def hey_csv(path: Path) -> Expected:
    rows = []
    for rec in csv.DictReader(io.StringIO(_text(path))):
        code = rec.get("status-code", "200")
        rows.append(("", float(rec["response-time"]) * 1000, code.isdigit() and int(code) < 400, False))
    exp = _from_samples("hey-csv", rows)
    exp.check_names = False   # hey never names its endpoint: the upload's scenario does
    return exp


# ------------------------------------------------------------------------------------------------- wrk

def wrk_text(path: Path) -> Expected:
    """Per wrk run in the file (each ends with its `Requests/sec:`): the printed `N requests in` and
    `Requests/sec`, and errors = non-2xx/3xx + every printed socket error."""
    text = _text(path)
    counts, rps, errors, rates = [], [], [], []
    blocks = re.findall(r"(?s)(.*?Requests/sec:\s+[\d.]+)", text)
    for block in blocks:
        count = int(re.findall(r"(\d+) requests in ", block)[-1])
        sock = re.findall(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", block)
        non2xx = re.findall(r"Non-2xx or 3xx responses: (\d+)", block)
        socket = sum(int(x) for x in sock[-1]) if sock else 0
        err = socket + (int(non2xx[-1]) if non2xx else 0)
        counts.append(float(count))
        rps.append(float(re.findall(r"Requests/sec:\s+([\d.]+)", block)[-1]))
        errors.append(float(err))
        rates.append(err * 100.0 / (count + socket) if count + socket else 0.0)
    return Expected("wrk-text", scores={"count": sorted(counts), "throughput": sorted(rps), "errors": sorted(errors),
                                        "error_rate": sorted(rates)})


# ---------------------------------------------------------------------------------------------- Locust

def locust_csv(path: Path) -> Expected:
    text = _text(path)
    first = text.split("\n", 1)[0].replace('"', "")
    if first.startswith("Method,Name,Error,Occurrences"):
        return Expected("locust-failures", refused=NOT_RESULT_FILES["locust-failures"])
    if first.startswith("Count,Message,Traceback"):
        return Expected("locust-exceptions", refused=NOT_RESULT_FILES["locust-exceptions"])
    rows = list(csv.DictReader(io.StringIO(text)))
    if first.startswith(("Timestamp,", "Type,Name,Timestamp")):
        agg = [r for r in rows if r["Name"] in ("Aggregated", "Total")]
        return Expected("locust-history", series_points=len({r["Timestamp"] for r in agg}))
    agg = next(r for r in rows if r["Name"] in ("Aggregated", "Total") and r.get("Type", "") in ("", "None"))

    def get(*names: str) -> float:
        return next(float(agg[n]) for n in names if n in agg)

    return Expected("locust-stats", reported={
        "count": get("Request Count", "# requests"), "errors": get("Failure Count", "# failures"),
        "latency_mean": get("Average Response Time", "Average response time"),
        "latency_min": get("Min Response Time", "Min response time"),
        "latency_max": get("Max Response Time", "Max response time"), "throughput": get("Requests/s")})


# ------------------------------------------------------------------------------------------------- JMH

_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def jmh_text(path: Path) -> Expected:
    """Every row of the table from the right: Units, [± Error], Score ('≈ 0', '≈ 10⁻ⁿ'), ...; percentile rows
    (`:p0.50`, `·p0.50`) are part of their benchmark's row, every other row is a score."""
    lines = _text(path).split("\n")
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["Benchmark"])
    scores = []
    for line in lines[start + 1:]:
        tok = line.split()
        if not tok or tok[0] == "Benchmark" or re.search(r":(?:[^:·]*·)?p[01](\.\d+)?$", tok[0]):
            continue
        tok.pop()               # unit
        if len(tok) >= 2 and tok[-2] == "±":
            del tok[-2:]
        score = tok.pop()
        if tok and tok[-1] == "≈":
            exp = score.translate(_SUP)
            scores.append(0.0 if exp == "0" else 10.0 ** int(exp[2:]))
        else:
            scores.append(float(score.replace(",", ".")) if score.count(",") == 1 and "." not in score
                          else float(score))
    return Expected("jmh-text", scores={"*": sorted(scores)})


def _jmh_num(v: Any) -> float:
    return {"NaN": math.nan, "+INF": math.inf, "-INF": -math.inf}.get(v, v) if isinstance(v, str) else float(v)


def jmh_json(path: Path) -> Expected:
    scores = []
    for r in json.loads(_text(path)):
        scores.append(_jmh_num(r["primaryMetric"]["score"]))
        scores.extend(_jmh_num(m["score"]) for m in (r.get("secondaryMetrics") or {}).values())
    # A NaN score (a profiler's placeholder) is no measurement.
    return Expected("jmh-json", scores={"*": sorted(s for s in scores if not math.isnan(s))})


# ---------------------------------------------------------------------------------- micro-benchmarks

def go_bench(path: Path) -> Expected:
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for line in _text(path).split("\n"):
        m = re.match(r"^(Benchmark\S+)\s+(\d+)\s+(.+)$", line)
        if not m:
            continue
        fields = m.group(3).split()
        for v, unit in zip(fields[0::2], fields[1::2]):
            values[(m.group(1), unit)].append(float(v))
    scores: dict[str, list[float]] = defaultdict(list)
    for (_, unit), vs in values.items():
        scores[unit].append(statistics.fmean(vs))
    return Expected("go-bench", scores={k: sorted(v) for k, v in scores.items()})


def pytest_benchmark(path: Path) -> Expected:
    data = json.loads(_text(path))
    return Expected("pytest-benchmark", scores={"mean": sorted(float(b["stats"]["mean"]) for b in data["benchmarks"])})


_GB_FIELDS = {"family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
              "iterations"}


def google_benchmark(path: Path) -> Expected:
    """Per benchmark and measure (real_time, cpu_time, each numeric user counter): the mean of its repetitions,
    or its `mean` aggregate when only aggregates were written."""
    data = json.loads(_text(path))
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    means: dict[str, dict[str, float]] = defaultdict(dict)
    for b in data["benchmarks"]:
        if b.get("error_occurred") or b.get("skipped") or b.get("aggregate_name") in ("BigO", "RMS"):
            continue
        name = b.get("run_name") or b["name"]
        keys = [k for k, v in b.items() if k not in _GB_FIELDS and isinstance(v, (int, float))
                and not isinstance(v, bool)]
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "mean":
                means[name].update({k: float(b[k]) for k in keys})
            continue
        for key in keys:
            per[name][key].append(float(b[key]))
    scores: dict[str, list[float]] = defaultdict(list)
    for name in set(per) | set(means):
        for key in set(per[name]) | set(means[name]):
            vs = per[name].get(key) or []
            scores[key].append(statistics.fmean(vs) if vs else means[name][key])
    return Expected("google-benchmark", scores={k: sorted(v) for k, v in scores.items()})


def criterion(path: Path) -> Expected:
    data = json.loads(_text(path))
    if "iters" in data:
        x = np.asarray(data["iters"], dtype=float)
        y = np.asarray(data["times"], dtype=float)
        if data.get("sampling_mode", "Linear") == "Linear":
            slope = float(np.linalg.lstsq(x[:, None], y, rcond=None)[0][0])   # least squares through 0
        else:
            slope = float(np.mean(y / x))
        return Expected("criterion-sample", scores={"time": [slope]})
    est = data.get("slope") or data["mean"]
    return Expected("criterion-estimates", scores={"time": [float(est["point_estimate"])]})


def hyperfine(path: Path) -> Expected:
    data = json.loads(_text(path))
    return Expected("hyperfine", scores={"mean": sorted(float(r["mean"]) for r in data["results"])})


def bmf(path: Path) -> Expected:
    scores: dict[str, list[float]] = defaultdict(list)
    for measures in json.loads(_text(path)).values():
        for measure, metric in measures.items():
            scores[measure].append(float(metric["value"]))
    return Expected("bmf", scores={k: sorted(v) for k, v in scores.items()})


def gab_history(path: Path) -> Expected:
    text = _text(path).strip()
    text = re.sub(r"^window\.BENCHMARK_DATA\s*=\s*", "", text).rstrip(";")
    data = json.loads(text)
    return Expected("gab-history", entries=sum(len(v) for v in data["entries"].values()))


def bencher_reports(path: Path) -> Expected:
    return Expected("bencher-reports", entries=len(json.loads(_text(path))))


def gatling_stats(path: Path) -> Expected:
    """The report's global numberOfRequests (total, ko): the first in the file, in stats.json and stats.js alike."""
    text = _text(path)
    m = re.search(r'"numberOfRequests"\s*:\s*\{\s*"total"\s*:\s*"?(\d+)"?\s*,\s*"ok"\s*:\s*"?(\d+)"?\s*,'
                  r'\s*"ko"\s*:\s*"?(\d+)"?', text)
    assert m, path
    fmt = "gatling-stats-js" if text.lstrip().startswith("var stats") else "gatling-stats-json"
    return Expected(fmt, reported={"count": float(m.group(1)), "errors": float(m.group(3))})


_ORACLES = {
    "jmeter-csv": jmeter_csv, "jmeter-xml": jmeter_xml, "gatling-simulation-log": gatling_log,
    "k6-json-output": k6_json, "k6-csv-output": k6_csv, "hey-text": hey_text, "hey-csv": hey_csv,
    "wrk-text": wrk_text, "locust-csv": locust_csv, "jmh-text": jmh_text, "jmh-json": jmh_json,
    "go-bench": go_bench, "pytest-benchmark": pytest_benchmark, "google-benchmark": google_benchmark,
    "criterion": criterion, "hyperfine": hyperfine, "bmf": bmf, "gab-history": gab_history,
    "bencher-reports": bencher_reports, "gatling-stats-json": gatling_stats,
    "k6-summary-export": lambda p: k6_summary(p, "k6-summary-export"),
    "k6-handlesummary-json": lambda p: k6_summary(p, "k6-handlesummary"),
}


def refusal(folder: str, path: Path) -> str | None:
    """Why a corpus file is not a result file (None: it is one), from its first bytes alone."""
    head = path.read_bytes()[:200]
    first = head.decode("utf-8", "replace").replace('"', "").lstrip("\ufeff")
    if folder == "locust-csv" and first.startswith(("Method,Name,Error,Occurrences", "Count,Message,Traceback")):
        return "holds no measurements"
    return None


def expected(folder: str, path: Path) -> Expected:
    return _ORACLES[folder](path)


def is_corpus_file(path: Path) -> bool:
    """Result files only: provenance notes and a tool's printed totals kept beside a file are not."""
    return path.is_file() and path.name not in ("SOURCES.md", "CANDIDATES.md", "README.md") \
        and ".printed." not in path.name


def utc(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)

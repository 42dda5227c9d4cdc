"""The four faults of issue 37, each on a genuine file a real tool wrote on our machine (tests/corpus/SOURCES.md),
with expected values read from the raw file here, independently of the parsers."""

from __future__ import annotations

import csv
import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from benchtrail.ingest.detect import detect_format, ingest_file
from benchtrail.ingest.model import ParseError, ParseOptions

from infra.localstack import REPO

CORPUS = REPO / "tests" / "corpus"


def test_gatling_log_opening_with_assertions_is_detected_and_read() -> None:
    path = CORPUS / "gatling-simulation-log" / "gatling-3.9.5_assertsim_port18491.simulation.log"
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("ASSERTION\t") and any(line.startswith("RUN\t") for line in lines)
    assert detect_format(path) == "gatling-log"
    requests = [line.split("\t") for line in lines if line.startswith("REQUEST\t")]
    parsed, result = ingest_file(path)
    assert parsed.meta["gatling_version"] == "3.9.5"
    [whole] = [c for c in result.cells if c.scenario is None]
    assert whole.stats["count"] == len(requests)
    assert whole.stats["errors"] == sum(1 for r in requests if "KO" in r)


@pytest.mark.parametrize("name,pattern,python", [
    ("jmeter-5.6.3_ts-yyyy-slash-HHmmss.jtl", "yyyy/MM/dd HH:mm:ss", "%Y/%m/%d %H:%M:%S"),
    ("jmeter-5.6.3_ts-iso-millis.jtl", "yyyy-MM-dd HH:mm:ss.SSS", "%Y-%m-%d %H:%M:%S.%f"),
    ("jmeter-5.6.3_ts-day-first.jtl", "dd/MM/yyyy HH:mm:ss", "%d/%m/%Y %H:%M:%S"),
    ("jmeter-5.6.3_ts-month-first-millis.jtl", "MM/dd/yyyy HH:mm:ss.SSS", "%m/%d/%Y %H:%M:%S.%f"),
])
def test_jmeter_formatted_timestamps_are_read(name: str, pattern: str, python: str) -> None:
    path = CORPUS / "jmeter-csv" / name
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    starts = [datetime.strptime(r["timeStamp"], python).replace(tzinfo=timezone.utc).timestamp() * 1000 for r in rows]
    elapsed = np.array([int(r["elapsed"]) for r in rows], dtype=float)
    parsed, result = ingest_file(path)
    assert parsed.meta["timestamp_format"] == pattern
    assert parsed.meta["timestamp_precision_ms"] == (1 if ".SSS" in pattern else 1000)
    tx = [r["responseMessage"].startswith("Number of samples in transaction") for r in rows]
    plain = [i for i, t in enumerate(tx) if not t]
    whole = [c for c in result.cells if c.scenario is None]
    assert sum(c.stats["count"] for c in whole) == len(plain)
    assert min(c.first_start_ms for c in whole) == round(min(starts[i] for i in plain))
    assert max(c.stats["latency_max"] for c in whole) == elapsed[plain].max()


def test_jmeter_timestamps_of_another_zone_need_the_zone(tmp_path: Path) -> None:
    path = CORPUS / "jmeter-csv" / "jmeter-5.6.3_ts-berlin-comma-millis.jtl"
    with path.open(encoding="utf-8", newline="") as fh:
        first = next(csv.DictReader(fh))["timeStamp"]        # e.g. "28.11.2026 03:27:31,132", Berlin time
    local = datetime.strptime(first.replace(",", "."), "%d.%m.%Y %H:%M:%S.%f")
    from zoneinfo import ZoneInfo
    berlin = local.replace(tzinfo=ZoneInfo("Europe/Berlin")).timestamp() * 1000
    utc = ingest_file(path, format="jmeter-csv")[0]
    given = ingest_file(path, format="jmeter-csv", options=ParseOptions(timestamp_zone="Europe/Berlin"))[0]
    assert given.meta["timestamp_zone"] == "Europe/Berlin" and utc.meta["timestamp_zone"] == "UTC"
    assert any("in UTC" in w for w in utc.warnings)
    del tmp_path
    # The parse is whole-file: compare the first row's start through a fresh parse with samples.
    from benchtrail.ingest.detect import parse_file
    samples = parse_file(path, options=ParseOptions(timestamp_zone="Europe/Berlin")).samples
    assert samples is not None and samples["start_ms"][0] == round(berlin)


def test_jmh_text_with_approximate_and_zero_scores_is_read() -> None:
    path = CORPUS / "jmh-text" / "tinybench_jmh-1.37_avgt-sample_us_gcprof.console.txt"
    text = path.read_text(encoding="utf-8")
    assert "≈ 0" in text and re.search(r"≈ 10[⁻¹²³⁴⁵⁶⁷⁸⁹⁰]+", text)
    parsed, _ = ingest_file(path)
    counts = [c for c in parsed.reported if (c.scenario or "").endswith(":gc.count")]
    assert counts and all(c.stats["score"] == 0.0 for c in counts)
    table = text[[m.start() for m in re.finditer(r"\nBenchmark .*Mode", text)][-1]:]
    rows = [line for line in table.split("\n")[1:] if "≈" in line and not re.search(r":(\w*·)?p[01]\.", line)]
    approx = [c for c in parsed.reported if "score_approx" in c.params]
    assert rows and len(approx) == len(rows)
    for c in approx:     # '≈ 0' is 0, '≈ 10⁻ⁿ' is 10⁻ⁿ
        assert c.stats["score"] == 0.0 or np.log10(c.stats["score"]) == round(np.log10(c.stats["score"]))


def test_wrk_keeps_its_printed_totals_and_shows_timeouts_beside_them() -> None:
    path = CORPUS / "wrk-text" / "wrk-4.1.0_timeouts_alternate.txt"
    text = path.read_text()
    requests = int(re.search(r"(\d+) requests in", text).group(1))                       # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))                   # type: ignore[union-attr]
    timeouts = int(re.search(r"timeout (\d+)", text).group(1))                            # type: ignore[union-attr]
    assert timeouts > 0
    [cell] = ingest_file(path)[0].reported
    assert cell.stats["count"] == requests and cell.stats["throughput"] == rps
    assert cell.stats["errors"] == timeouts and cell.params["socket_errors_timeout"] == str(timeouts)
    assert cell.stats["error_rate"] == pytest.approx(100.0 * timeouts / (requests + timeouts))


def test_bad_micro_benchmark_files_name_line_and_field(write) -> None:
    go = write("bench.txt", "goos: linux\nBenchmarkA-2   100   12 ns/op\nBenchmarkB-2   100   fast ns/op\n")
    with pytest.raises(ParseError) as exc:
        ingest_file(go)
    assert (exc.value.line, exc.value.field) == (3, "ns/op")
    pytest_json = write("b.json", '{"machine_info": {}, "benchmarks": [{"name": "t", "stats": {"mean": "x"}}]}')
    with pytest.raises(ParseError) as exc:
        ingest_file(pytest_json)
    assert exc.value.field == "benchmarks[0].stats.mean"
    bmf = write("bmf.json", '{"bench": {"latency": {"lower_value": 1.0}}}')
    with pytest.raises(ParseError) as exc:
        ingest_file(bmf)
    assert exc.value.field == "bench.latency.value"
    # A format given on upload always wins: a Go output read as hyperfine is refused, not re-detected.
    with pytest.raises(ParseError, match="invalid JSON"):
        ingest_file(go, format="hyperfine")

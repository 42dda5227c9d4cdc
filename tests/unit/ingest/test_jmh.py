"""JMH text and JSON. Text rows are re-read here with one strict regular expression per layout
(an independent reader); JSON scores are checked against the mean of their own rawData."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from benchtrail.ingest.detect import parse_file
from benchtrail.ingest.model import ParseError

from tests.support.corpus import real

VERSIONS = ("2.7.x", "2.8.x", "2.9.x", "2.18.x", "2.21.x", "2.21.0")
VARIANTS = ("auto", "no", "sdk")
BENCHMARKS = {"AwsSdkBenchmark.awsV1Request", "AwsSdkBenchmark.awsV2Request",
              "HttpDownstreamBenchmark.makeHttpRequest", "ServletBenchmark.serviceRequest",
              "SqlBenchmark.sqlQuery"}
_MAIN = re.compile(r"^(\w+\.\w+)\s+(thrpt|sample)\s+(\d+)\s+(\d+\.\d{3})\s+±\s+(\d+\.\d{3})\s+(\S+)\s*$")
_PCT = re.compile(r"^(\w+\.\w+):(?:\w+·)?p(\d\.\d+)\s+sample\s+(\d+\.\d{3})\s+ms/op\s*$")


def _oracle(text: str) -> tuple[dict, dict]:
    main, pct = {}, {}
    for line in text.splitlines()[1:]:
        if m := _MAIN.match(line):
            main[(m[1], m[2])] = (float(m[4]), float(m[5]), m[6], int(m[3]))
        elif m := _PCT.match(line):
            pct[(m[1], m[2])] = float(m[3])
        else:
            raise AssertionError(f"oracle cannot read {line!r}")
    return main, pct


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_xray_jmh_text_exact_scores(version: str, variant: str) -> None:
    path = real(f"jmh-text/aws-xray-java-agent_{version}_{variant}-instrumentation.txt")
    main, pct = _oracle(path.read_text(encoding="utf-8"))
    cells = parse_file(path).reported
    assert len(cells) == len(main) == 10
    assert {c.scenario for c in cells} == BENCHMARKS
    for c in cells:
        score, error, unit, cnt = main[(c.scenario, c.mode)]
        assert (c.stats["score"], c.stats["score_error"], c.unit) == (score, error, unit)
        assert c.params["cnt"] == str(cnt)
        if c.mode == "sample":  # ms/op percentile rows -> latency stats in ms
            assert c.stats["latency_p50"] == pct[(c.scenario, "0.50")]
            assert c.stats["latency_p99"] == pct[(c.scenario, "0.99")]
            assert c.stats["latency_p999"] == pct[(c.scenario, "0.999")]
            assert c.stats["latency_min"] == pct[(c.scenario, "0.00")]
            assert c.stats["latency_max"] == pct[(c.scenario, "1.00")]
            assert float(c.params["latency_p9999_ms"]) == pct[(c.scenario, "0.9999")]


def test_xray_spot_values_read_by_eye() -> None:
    """A few numbers copied by hand from the files (both percentile label styles)."""
    old = {(c.scenario, c.mode): c for c in parse_file(
        real("jmh-text/aws-xray-java-agent_2.7.x_no-instrumentation.txt")).reported}
    assert old[("SqlBenchmark.sqlQuery", "thrpt")].stats == {"score": 0.484, "score_error": 0.001}
    assert old[("AwsSdkBenchmark.awsV1Request", "sample")].stats["latency_p50"] == 2.339
    new = {(c.scenario, c.mode): c for c in parse_file(
        real("jmh-text/aws-xray-java-agent_2.18.x_no-instrumentation.txt")).reported}
    assert new[("AwsSdkBenchmark.awsV2Request", "thrpt")].stats == {"score": 0.405, "score_error": 0.026}
    assert new[("AwsSdkBenchmark.awsV1Request", "sample")].stats["latency_p999"] == 6.357
    # hand-edited 2.7.x rows with shifted alignment still parse (read from the right)
    auto = {(c.scenario, c.mode): c for c in parse_file(
        real("jmh-text/aws-xray-java-agent_2.7.x_auto-instrumentation.txt")).reported}
    assert auto[("SqlBenchmark.sqlQuery", "sample")].stats["score"] == 2.129


def test_text_edge_cases(write) -> None:
    text = (
        "Benchmark                (size)  Mode  Cnt   Score    Error  Units\n"
        "Bench.tiny                   10  avgt    5  ≈ 10⁻⁴            ms/op\n"
        "Bench.comma                  10  thrpt   5  528,857 ± 12,500  ops/s\n"
        "Bench.noerr                 100    ss       3,500            ms/op\n"
        "Bench.sampled               100  sample 50  1.000 ± 0.100  ops/ms\n"
        "Bench.sampled:p0.50         100  sample      0.900          ops/ms\n"
        "Bench.comma:·gc.alloc.rate   10  thrpt   5  12.000 ± 1.000  MB/sec\n"
    )
    cells = {(c.scenario, c.params.get("size")): c for c in parse_file(write("t.txt", text)).reported}
    assert cells[("Bench.tiny(size=10)", "10")].stats == {"score": 1e-4}
    assert "score_approx" in cells[("Bench.tiny(size=10)", "10")].params
    assert cells[("Bench.comma(size=10)", "10")].stats == {"score": 528.857, "score_error": 12.5}
    assert cells[("Bench.noerr(size=100)", "100")].stats == {"score": 3.5}
    sampled = cells[("Bench.sampled(size=100)", "100")]
    assert "latency_p50" not in sampled.stats      # ops/ms is not a time unit
    assert sampled.params["score_p50 [ops/ms]"] == "0.9"
    assert cells[("Bench.comma(size=10):gc.alloc.rate", "10")].unit == "MB/sec"


def test_text_each_param_combination_is_its_own_scenario(write) -> None:
    """JMH runs every @Param combination as a benchmark of its own; "N/A" is a parameter the benchmark has not."""
    text = (
        "Benchmark          (mode)  (size)  Mode  Cnt    Score   Error  Units\n"
        "Bench.put            fast      10  thrpt   5  100.000 ± 1.000  ops/s\n"
        "Bench.put            fast     100  thrpt   5   90.000 ± 1.000  ops/s\n"
        "Bench.put            slow      10  thrpt   5   50.000 ± 1.000  ops/s\n"
        "Bench.get             N/A      10  thrpt   5  200.000 ± 2.000  ops/s\n"
    )
    cells = parse_file(write("p.txt", text)).reported
    assert [(c.scenario, c.stats["score"]) for c in cells] == [
        ("Bench.put(mode=fast, size=10)", 100.0), ("Bench.put(mode=fast, size=100)", 90.0),
        ("Bench.put(mode=slow, size=10)", 50.0), ("Bench.get(size=10)", 200.0)]


def test_text_unreadable_row_names_line(write) -> None:
    text = "Benchmark  Mode  Cnt  Score  Error  Units\nBench.a  thrpt  5  abc ± 1.0  ops/s\n"
    with pytest.raises(ParseError) as exc:
        parse_file(write("bad.txt", text), format="jmh-text")
    assert (exc.value.line, exc.value.field) == (2, "Score")


@pytest.mark.parametrize("name", [
    "jmh-json/DennisRippinger_jmh-dmn_jmh-1.19_thrpt_10forks.json",
    "jmh-json/kamilkloch_fs2-benchmark_jmh-1.37_thrpt_5forks.json",
    "jmh-json/gpanther_benchmark-arraycopy_jmh-1.11.3_avgt.json",
    "jmh-json/casbin_jcasbin_jmh-1.37_thrpt-ss_params.json",
])
def test_json_scores_params_and_replicates(name: str) -> None:
    path = real(name)
    data = json.loads(path.read_text(encoding="utf-8"))
    primary = [c for c in parse_file(path).reported if ":" not in (c.scenario or "")]
    assert len(primary) == len(data)
    for c, r in zip(primary, data, strict=True):
        pm = r["primaryMetric"]
        raw = [v for fork in pm["rawData"] for v in fork]
        # Each @Param combination is a benchmark of its own: its values are part of the scenario.
        named = ", ".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()))
        assert c.scenario == (f"{r['benchmark']}({named})" if named else r["benchmark"])
        assert c.mode == r["mode"] and c.unit == pm["scoreUnit"]
        assert c.stats["score"] == pm["score"]
        assert c.replicates == raw
        assert c.stats["score"] == pytest.approx(np.mean(raw), rel=1e-9)   # JMH score = mean
        assert {k: c.params[k] for k in r.get("params", {})} == r.get("params", {})
        assert c.load.key == f"threads:{r['threads']}"


def test_json_nan_error_and_gc_names() -> None:
    nan_cells = parse_file(real("jmh-json/avarghes_SQProducerConsumer_jmh-1.21_avgt_NaN-error.json")).reported
    assert all("score_error" not in c.stats for c in nan_cells)
    assert all(len(c.replicates) == 2 for c in nan_cells)
    gc = parse_file(real("jmh-json/kcrypt_scala-blake3_jmh-1.32_avgt_gcprof_intel.json")).reported
    names = {c.scenario.split(":", 1)[1] for c in gc if ":" in (c.scenario or "")}
    assert "gc.alloc.rate" in names and not any("·" in n for n in names)
    count = next(c for c in gc if (c.scenario or "").endswith(":gc.count"))
    assert count.unit == "counts"


def test_json_special_numbers(write) -> None:
    doc = [{"benchmark": "b.X.m", "mode": "sample", "threads": 2, "forks": 1,
            "primaryMetric": {"score": 2.0, "scoreError": "NaN", "scoreUnit": "us/op",
                              "scorePercentiles": {"0.0": 1.0, "50.0": 1.5, "99.0": "+INF",
                                                   "99.99": 3.0, "100.0": 4.0},
                              "rawData": [[1.0, "NaN"]]},
            "secondaryMetrics": {"·gc.count": {"score": 3, "scoreError": "NaN",
                                               "scoreUnit": "counts", "rawData": [[3]]}}}]
    cells = parse_file(write("j.json", json.dumps(doc))).reported
    main = cells[0]
    assert main.stats["latency_p50"] == pytest.approx(0.0015)        # us -> ms
    assert math.isinf(main.stats["latency_p99"]) and main.stats["latency_max"] == pytest.approx(0.004)
    assert main.params["latency_p9999_ms"] == repr(3.0 * 1e-3)
    assert math.isnan(main.replicates[1])
    assert cells[1].scenario == "b.X.m:gc.count" and cells[1].stats == {"score": 3.0}

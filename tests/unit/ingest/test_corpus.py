"""Every file of the shared real-tool corpus either parses (detected as the expected format, with
cells we can build) or is rejected with a precise reason. A new corpus file fails this test until
it is classified here."""

from __future__ import annotations

import math

import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import detect_format, parse_file
from benchtrail.ingest.model import ParseError

from tests.support.corpus import REAL

OK = "ok"
REJECT = "reject"
_LOCUST_AUX = "holds no measurements"
_GATLING_BINARY = "binary Gatling logs (simulation.log of Gatling >= 3.13) are not supported"

EXPECTED: dict[str, tuple[str, str]] = {
    "gatling-simulation-log/gatling_known_stats_simulation_binary.log": (REJECT, _GATLING_BINARY),
    "gatling-simulation-log/taurus_gatling-331-000_simulation.log": (OK, "gatling-log"),
    "gatling-simulation-log/taurus_gatling-351-000_simulation.log": (OK, "gatling-log"),
    "gatling-simulation-log/taurus_gatling-6-314_simulation.log": (REJECT, _GATLING_BINARY),
    "gatling-simulation-log/taurus_gatling-8-314_simulation.log": (REJECT, _GATLING_BINARY),
    "hey-text/akhastaf_webserver_hey_5b486fa.log": (OK, "hey-text"),
    "hey-text/akhastaf_webserver_hey_errors_4bbd90b.log": (OK, "hey-text"),
    "hey-text/bitlet_benchmark_stats_5runs_markdown.md": (OK, "hey-text"),
    "hey-text/hnakamur_ats-nginx-bad-request_hey_0accfc5.log": (OK, "hey-text"),
    "hey-text/hnakamur_ats-nginx-bad-request_hey_eedd742.log": (OK, "hey-text"),
    **{f"jmeter-csv/{n}": (OK, "jmeter-csv") for n in (
        "Gwayaboy_mslearn-tailspin-spacegame-web-deploy_results.jtl",
        "ehrbase_ehrbase-load-test_result.jtl",
        "ernestosbarbosa_performance-ci-jmeter-tdc2020_result.jtl",
        "jenkinsci_performance-plugin_JENKINS-16627_headerless.jtl",
        "jenkinsci_performance-plugin_filewithtransactions.csv",
        "jenkinsci_performance-plugin_multiLineCSV.jtl",
        "jenkinsci_performance-plugin_single_result_res.csv",
        "taurus_doublequoting.jtl", "taurus_kpi-pair1.jtl", "taurus_quote-guessing-crash.jtl",
        "taurus_simple.kpi.jtl", "taurus_slow-stdev.jtl", "taurus_tabs.jtl", "taurus_tranctl.jtl",
        "taurus_unicode.jtl")},
    **{f"jmeter-xml/{n}": (OK, "jmeter-xml") for n in (
        "jenkinsci_performance-plugin_JMeterResultsMultiLevel.jtl",
        "jenkinsci_performance-plugin_JMeterResultsMultiThread.jtl",
        "jenkinsci_performance-plugin_constraint-test.jtl.xml",
        "jenkinsci_performance-plugin_single_result_nested_res.jtl",
        "taurus_error-mix.jtl", "taurus_resource_tc.jtl", "taurus_trace.jtl")},
    **{f"jmh-json/{n}": (OK, "jmh-json") for n in (
        "DennisRippinger_jmh-dmn_jmh-1.19_thrpt_10forks.json",
        "Nicole00_NebulaClientBenchMark_jmh-1.23_avgt_threads.json",
        "avarghes_SQProducerConsumer_jmh-1.21_avgt_NaN-error.json",
        "casbin_jcasbin_jmh-1.37_thrpt-ss_params.json",
        "chrisgleissner_java-benchmarks_jmh-1.36_thrpt_groups.json",
        "gpanther_benchmark-arraycopy_jmh-1.11.3_avgt.json",
        "hariharanv01_serialization-benchmark_jmh-1.21_thrpt_reformatted.json",
        "jabrena_101-jmh_jmh-1.23_avgt_12threads_2forks.json",
        "kamilkloch_fs2-benchmark_jmh-1.37_thrpt_5forks.json",
        "kcrypt_scala-blake3_jmh-1.32_avgt_gcprof_intel.json",
        "twineworks_collections-benchmarks_jmh-1.19_avgt.json")},
    **{f"jmh-text/aws-xray-java-agent_{v}_{k}-instrumentation.txt": (OK, "jmh-text")
       for v in ("2.7.x", "2.8.x", "2.9.x", "2.18.x", "2.21.x", "2.21.0")
       for k in ("auto", "no", "sdk")},
    **{f"jmh-text/superseded/aws-xray-java-agent_2.7.x_{k}-instrumentation_dda7b6a.txt":
       (OK, "jmh-text") for k in ("auto", "no", "sdk")},
    "k6-csv-output/taurus_k6_kpi.csv": (OK, "k6-csv"),
    **{f"k6-handlesummary-json/{n}": (OK, "k6-handlesummary") for n in (
        "MaribelDS_k6Rendimiento_handleSummary_indented.json",
        "Md-Nur-Amin_ParaBank_k6_handleSummary.json",
        "grafana_k6-example-circleci-orb_handleSummary.json",
        "gustiramadhan_Performance-test-using-k6_handleSummary.json")},
    "k6-json-output/KirillY_k6-load-template_k6-results.ndjson": (OK, "k6-json"),
    "k6-summary-export/MM12583_K6_Script_Automated_Test_summary-export_browser.json":
        (OK, "k6-summary-export"),
    "k6-summary-export/guths_k6-centrifugo-protobuf-poc_summary-export_ws.json":
        (OK, "k6-summary-export"),
    **{f"locust-csv/{p}_{kind}.csv": (OK, fmt) for p in (
        "AbhishekkumarReddy_odoo-locust_results", "isNeil_neuro_locust",
        "veroliut_loadTestRetailDemoStore_results", "zhajiangmian2342_20200823_locust")
       for kind, fmt in (("stats", "locust-stats"), ("stats_history", "locust-history"))},
    **{f"locust-csv/{p}_failures.csv": (REJECT, _LOCUST_AUX) for p in (
        "AbhishekkumarReddy_odoo-locust_results", "isNeil_neuro_locust",
        "veroliut_loadTestRetailDemoStore_results", "zhajiangmian2342_20200823_locust")},
    **{f"locust-csv/{p}_exceptions.csv": (REJECT, _LOCUST_AUX) for p in (
        "AbhishekkumarReddy_odoo-locust_results", "isNeil_neuro_locust",
        "veroliut_loadTestRetailDemoStore_results")},
    **{f"wrk-text/{n}": (OK, "wrk-text") for n in (
        "Zadneprovski_HttpServer_wrk_socket-errors.log",
        "desyang-hub_web-server-cpp_wrk_latency.txt",
        "jenkinsci_performance-plugin_WrkResultsQuick.wrk",
        "jenkinsci_performance-plugin_WrkResultsWithErrors.wrk",
        "jenkinsci_performance-plugin_WrkResultsWithLatencyFlag.wrk",
        "modified/jenkinsci_performance-plugin_WrkResultsLong.wrk")},
}


def _corpus() -> list[str]:
    if not REAL.exists():
        return []
    return sorted(str(p.relative_to(REAL)) for p in REAL.rglob("*")
                  if p.is_file() and p.name != "SOURCES.md")


def test_every_corpus_file_is_classified() -> None:
    files = _corpus()
    if not files:
        pytest.fail(f"shared fixture corpus not found at {REAL}: clone the repo with shared/ beside it")
    assert sorted(set(files) - set(EXPECTED)) == [], "unclassified corpus files"
    assert sorted(set(EXPECTED) - set(files)) == [], "classified files missing from the corpus"


@pytest.mark.parametrize("relative", sorted(EXPECTED))
def test_corpus_file(relative: str) -> None:
    path = REAL / relative
    if not path.exists():
        pytest.fail(f"shared fixture corpus not found at {REAL}: clone the repo with shared/ beside it")
    outcome, detail = EXPECTED[relative]
    if outcome == REJECT:
        with pytest.raises(ParseError) as exc:
            parse_file(path)
        assert detail in str(exc.value)
        return
    assert detect_format(path) == detail
    parsed = parse_file(path)
    assert parsed.format == detail
    result = build_cells(parsed)
    n_samples = 0 if parsed.samples is None else parsed.samples.height
    assert n_samples or parsed.reported or parsed.series
    if n_samples:
        # every non-transaction sample lands in exactly one "all scenarios" cell
        all_cells = [c for c in result.cells if c.scenario is None]
        expected = int((~parsed.samples["is_transaction"]).sum())  # type: ignore[index]
        assert sum(c.stats["count"] for c in all_cells) == expected
    for cell in parsed.reported:
        for value in cell.stats.values():
            assert isinstance(value, float)
            assert not math.isinf(value)

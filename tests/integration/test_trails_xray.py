"""The six X-Ray agent versions through the API: overheads of JMH cells, trails in version order,
and change points/alerts only where a change exceeds the project's settings. Expected values come
from the raw files, read here with plain Python, and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from tests.support.api import wait_analysed
from tests.support.jmh import XRAY_VARIANTS as VARIANTS
from tests.support.jmh import XRAY_VERSIONS as VERSIONS
from tests.support.jmh import jmh_rows, original, scaled, set_settings, upload_version



def test_real_xray_versions_give_overheads_and_no_alert_on_noise(client, worker, make_project, admin_token):
    slug, token = make_project()
    runs = [wait_analysed(client, upload_version(client, slug, token, v, {x: original(v, x) for x in VARIANTS}))
            for v in VERSIONS]

    # Overhead of one JMH cell: Welch interval from score ± error (JMH's error is a 99.9% t half-width).
    last = runs[-1]
    oh = client.get(f"/api/v1/runs/{last['slug']}/overheads", params={"metric": "score"}).json()["items"]
    got = next(o for o in oh if o["cell"]["scenario"] == "AwsSdkBenchmark.awsV2Request"
               and o["cell"]["mode"] == "sample" and o["variant"] == "auto-instrumentation")
    ref = jmh_rows(original("2.21.x", "no-instrumentation"))[("AwsSdkBenchmark.awsV2Request", "sample")]
    var = jmh_rows(original("2.21.x", "auto-instrumentation"))[("AwsSdkBenchmark.awsV2Request", "sample")]
    se = [e / stats.t.ppf(0.9995, n - 1) for _, e, n in (ref, var)]
    df = (se[0] ** 2 + se[1] ** 2) ** 2 / (se[0] ** 4 / (ref[2] - 1) + se[1] ** 4 / (var[2] - 1))
    half = stats.t.ppf(0.975, df) * math.hypot(*se)
    r = got["result"]
    assert r["abs_diff"] == pytest.approx(var[0] - ref[0], abs=1e-12)
    assert r["rel_diff"] == pytest.approx((var[0] - ref[0]) / ref[0], rel=1e-9)
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((var[0] - ref[0] - half, var[0] - ref[0] + half), rel=1e-9)
    assert r["verdict"] == "small" and r["worse"] is True  # +4.6% of 2.43 ms (1-5%), interval clear of 0

    # The agent's trail is in semantic-version order (2.9.x before 2.18.x), values from the files.
    trails = client.get(f"/api/v1/projects/{slug}/trails", params={
        "scenario": "AwsSdkBenchmark.awsV2Request", "variant": "auto-instrumentation", "mode": "sample"}).json()
    assert len(trails["items"]) == 1 and trails["items"][0]["points"] == 6
    trail_id = trails["items"][0]["id"]
    detail = client.get(f"/api/v1/trails/{trail_id}", params={"metric": "score"}).json()
    assert [p["agent_version"] for p in detail["points"]] == VERSIONS
    expected = [jmh_rows(original(v, "auto-instrumentation"))[("AwsSdkBenchmark.awsV2Request", "sample")][0]
                for v in VERSIONS]
    assert [p["value"] for p in detail["points"]] == pytest.approx(expected, rel=1e-12)
    assert detail["direction"] == "lower" and detail["unit"] == "ms/op"

    overhead = client.get(f"/api/v1/trails/{trail_id}/overhead", params={"metric": "score"}).json()
    refs = [jmh_rows(original(v, "no-instrumentation"))[("AwsSdkBenchmark.awsV2Request", "sample")][0]
            for v in VERSIONS]
    assert overhead["reference_variant"] == "no-instrumentation"
    # Time per operation: a positive overhead is worse (the dashboard tones it so). Throughput: more is better.
    assert (overhead["direction"], overhead["unit"]) == ("lower", "ms/op")
    thrpt = client.get(f"/api/v1/projects/{slug}/trails", params={
        "scenario": "AwsSdkBenchmark.awsV2Request", "variant": "auto-instrumentation", "mode": "thrpt"}).json()
    thrpt_overhead = client.get(f"/api/v1/trails/{thrpt['items'][0]['id']}/overhead", params={"metric": "score"}).json()
    assert thrpt_overhead["direction"] == "higher" and thrpt_overhead["unit"].startswith("ops/")
    assert [p["value_pct"] for p in overhead["points"]] == pytest.approx(
        [100 * (a - b) / b for a, b in zip(expected, refs)], rel=1e-9)

    # Real data: the added latency wanders by a few tenths of a percent; nothing is alerted.
    alerts = client.get(f"/api/v1/projects/{slug}/alerts").json()
    assert alerts["items"] == [], [a["summary"] for a in alerts["items"]]
    assert all(run["alerts"] == [] for run in runs)


def test_injected_step_alerts_only_where_it_exceeds_the_settings(client, worker, make_project, admin_token):
    slug, token = make_project()
    set_settings(client, admin_token, slug, {"metrics": ["score"], "detection": {"min_magnitude_pct": 5}})
    files: dict[str, dict[str, str]] = {}
    for i, v in enumerate(VERSIONS):
        texts = {x: original(v, x) for x in VARIANTS}
        if i >= 3:  # from 2.18.x on: the auto agent adds 10% to servlets, the SDK 3% to SQL
            texts["auto-instrumentation"] = scaled(texts["auto-instrumentation"], "ServletBenchmark", 1.10)
            texts["sdk-instrumentation"] = scaled(texts["sdk-instrumentation"], "SqlBenchmark", 1.03)
        files[v] = texts
    slugs = []
    for v in VERSIONS:
        run = wait_analysed(client, upload_version(client, slug, token, v, files[v]))
        slugs.append(run["slug"])
        # A change needs three points on each side: only the sixth version can reveal it.
        assert (run["alerts"] != []) == (v == VERSIONS[-1]), (v, run["alerts"])

    alerts = client.get(f"/api/v1/projects/{slug}/alerts").json()["items"]
    found = sorted((a["trail"]["scenario"], a["trail"]["variant"], a["trail"]["mode"], a["kind"], a["metric"])
                   for a in alerts)
    assert found == [("ServletBenchmark.serviceRequest", "auto-instrumentation", "sample", "overhead", "score"),
                     ("ServletBenchmark.serviceRequest", "auto-instrumentation", "sample", "trail", "score")]
    key = ("ServletBenchmark.serviceRequest", "sample")
    auto = np.array([jmh_rows(files[v]["auto-instrumentation"])[key][0] for v in VERSIONS])
    ref = np.array([jmh_rows(files[v]["no-instrumentation"])[key][0] for v in VERSIONS])
    for a in alerts:
        assert a["direction"] == "regression" and a["state"] == "new"
        assert a["run"] == slugs[3] and a["agent_version"] == "2.18.x" and a["detected_by"] == slugs[5]
        values = auto if a["kind"] == "trail" else 100 * (auto - ref) / ref
        before, after = values[:3], values[3:]
        assert a["before_value"] == pytest.approx(before.mean(), rel=1e-9)
        assert a["after_value"] == pytest.approx(after.mean(), rel=1e-9)
        assert a["magnitude_abs"] == pytest.approx(after.mean() - before.mean(), rel=1e-9)
        assert a["p_value"] == pytest.approx(stats.ttest_ind(before, after, equal_var=False).pvalue, rel=1e-6)
    # The SDK's 3% on SQL is a real step too, just below the project's 5%: its change point is
    # reported on the trail but not alerted.
    sql = client.get(f"/api/v1/projects/{slug}/trails", params={
        "scenario": "SqlBenchmark.sqlQuery", "variant": "sdk-instrumentation", "mode": "sample"}).json()["items"][0]
    assert client.get(f"/api/v1/trails/{sql['id']}", params={"metric": "score"}).json()["alerts"] == []

"""Honest A/B verdicts through the real API and worker: a run of three interleaved repetitions per
variant (JMeter CSV files made here with numpy: AR(1) lognormal latency, 2% run-to-run offsets), one
variant with the reference's distribution (A/A) and one 8% slower. The per-repetition values and
intervals the API shows are checked against numpy and scipy on the raw files."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.signal import lfilter

from tests.support.api import wait_analysed
from tests.support.api import upload
from tests.support.jtl import HEADER
from tests.support.stats import benjamini_hochberg

SAMPLES = 20_000
T0 = 1_700_000_000_000


def write_repetition(path: Path, rng: np.random.Generator, *, start_ms: int, slowdown: float) -> np.ndarray:
    """One repetition: 20,000 requests of 10 threads over 40 s, latency 100 ms · exp(0.3·AR(1) + offset)
    in whole ms as JMeter writes it (at 10 ms the 1 ms resolution alone would be 8%)."""
    e = rng.standard_normal(SAMPLES) * math.sqrt(1 - 0.9 ** 2)
    e[0] = rng.standard_normal()
    elapsed = np.maximum(1, np.round(100 * np.exp(0.3 * lfilter([1.0], [1.0, -0.9], e)
                                                 + rng.normal(0, 0.02)) * slowdown)).astype(int)
    starts = start_ms + np.arange(SAMPLES) * 2
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for i, (ts, el) in enumerate(zip(starts, elapsed)):
            w.writerow([int(ts), int(el), "GET /api", "200", "OK", f"TG 10 1-{i % 10 + 1}", "text", "true", "",
                        512, 120, 10, 10, "http://127.0.0.1:8080/api", int(el), 0, 0])
    return elapsed.astype(float)


def p75(x: np.ndarray) -> float:
    return float(np.percentile(x, 75, method="inverted_cdf"))


def test_a_a_is_not_a_difference_and_8_percent_slower_is_flagged(client, worker, make_project, scratch):
    slug, token = make_project()
    rng = np.random.default_rng(909)
    files, raw = [], {"baseline": [], "same": [], "slower": []}
    for rep in range(3):                                   # interleaved: baseline, same, slower, baseline, ...
        for i, (variant, slowdown) in enumerate((("baseline", 1.0), ("same", 1.0), ("slower", 1.08))):
            path = scratch / f"{variant}-{rep + 1}.jtl"
            start = T0 + (rep * 3 + i) * 60_000
            raw[variant].append(write_repetition(path, rng, start_ms=start, slowdown=slowdown))
            files.append((variant, path))
    r = upload(client, slug, token, files, {"agent_version": "1.0.0", "reference": "baseline"})
    assert r.status_code == 202, r.text
    run = wait_analysed(client, r.json()["run"], timeout=120)

    body = client.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": "latency_p75"}).json()
    items = {(i["variant"], i["cell"]["scenario"]): i["result"] for i in body["items"]}
    ref_values = [p75(x) for x in raw["baseline"]]
    for variant in ("same", "slower"):
        res = items[(variant, "GET /api")]
        values = [p75(x) for x in raw[variant]]
        # The per-repetition values behind the verdict, in execution order, equal numpy on each file.
        assert res["repetitions"]["reference"] == pytest.approx(ref_values, rel=1e-3)
        assert res["repetitions"]["variant"] == pytest.approx(values, rel=1e-3)
        offset = {"same": 1, "slower": 2}[variant]
        assert res["repetitions"]["reference_positions"] == [0, 3, 6]
        assert res["repetitions"]["variant_positions"] == [offset, 3 + offset, 6 + offset]
        # The interval is Student's t over those values (3 + 3 repetitions, pooled variance), plus each
        # arm's rounding: JMeter records whole ms, so a P75 is known to within a step, variance (1 ms)²/12.
        def interval(b: list[float], a: list[float]) -> tuple[float, float, float]:
            se = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2 * (2 / 3) + 2 / 12)
            diff, half = np.mean(b) - np.mean(a), stats.t.ppf(0.975, 4) * se
            return diff - half, diff + half, 2 * stats.t.sf(abs(diff) / se, 4)

        low, high, p = interval(values, ref_values)
        width = high - low
        assert res["method"] == "t-repetitions" and res["paired"] is False
        assert res["ci_low"] == pytest.approx(low, abs=0.02 * width + 0.2)    # HDR: values within 0.1%
        assert res["ci_high"] == pytest.approx(high, abs=0.02 * width + 0.2)
        assert res["p_value"] == pytest.approx(p, abs=0.02)
        # Exactly, from the per-repetition values the API shows (checked against numpy above).
        shown = interval(res["repetitions"]["variant"], res["repetitions"]["reference"])
        assert (res["ci_low"], res["ci_high"], res["p_value"]) == pytest.approx(shown, rel=1e-9)
        assert (res["n_ref"], res["n_var"]) == (3, 3)

    # Read together, the answer's verdicts hold the false discovery rate: each p adjusted over every item.
    assert len(body["items"]) >= 4
    assert [i["p_adjusted"] for i in body["items"]] == pytest.approx(
        benjamini_hochberg([i["result"]["p_value"] for i in body["items"]]))

    same, slower = items[("same", "GET /api")], items[("slower", "GET /api")]
    assert same["verdict"] in ("no difference", "too noisy to tell")
    assert same["ci_low"] <= 0 <= same["ci_high"] and same["worse"] is None
    assert slower["verdict"] not in ("no difference", "too noisy to tell") and slower["worse"] is True
    assert slower["ci_low"] > 0
    assert 0.04 < slower["rel_diff"] < 0.12

    # The mean goes through the same path: exact per-repetition means.
    mean = client.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": "latency_mean"}).json()
    res = next(i["result"] for i in mean["items"] if i["variant"] == "slower" and i["cell"]["scenario"] == "GET /api")
    assert res["repetitions"]["variant"] == pytest.approx([x.mean() for x in raw["slower"]], rel=1e-9)
    ci = stats.ttest_ind([x.mean() for x in raw["slower"]], [x.mean() for x in raw["baseline"]]).confidence_interval()
    assert (res["ci_low"], res["ci_high"]) == (pytest.approx(ci.low, rel=1e-6), pytest.approx(ci.high, rel=1e-6))

    # /compare between two variants shows the same evidence.
    cmp = client.get("/api/v1/compare", params={"a": run["slug"], "b": run["slug"], "a_variant": "baseline",
                                                 "b_variant": "slower", "metric": "latency_p75"}).json()
    row = next(i for i in cmp["items"] if i["cell"]["scenario"] == "GET /api")
    assert row["result"]["repetitions"]["variant"] == pytest.approx([p75(x) for x in raw["slower"]], rel=1e-3)
    assert row["result"]["method"] == "t-repetitions" and row["result"]["ci_low"] > 0


def write_counted(path: Path, rng: np.random.Generator, *, start_ms: int, gap_ms: float, error_p: float) -> tuple[float, float]:
    """One repetition of 4,000 requests started every ~`gap_ms` (so its throughput is ~1000/gap_ms req/s),
    each failing with probability `error_p`. Returns (throughput, error rate in %) as numpy computes
    them from the rows: requests / (last end − first start), failures / requests."""
    n = 4_000
    starts = start_ms + np.round(np.cumsum(rng.uniform(0.5, 1.5, n) * gap_ms)).astype(int)
    elapsed = rng.integers(1, 20, n)
    ok = rng.random(n) >= error_p
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for i, (ts, el, good) in enumerate(zip(starts, elapsed, ok)):
            w.writerow([int(ts), int(el), "GET /api", "200" if good else "500", "OK" if good else "Server Error",
                        f"TG 10 1-{i % 10 + 1}", "text", str(bool(good)).lower(), "", 512, 120, 10, 10,
                        "http://127.0.0.1:8080/api", int(el), 0, 0])
    duration_s = (np.max(starts + elapsed) - np.min(starts)) / 1000.0
    return n / duration_s, float((~ok).sum()) * 100.0 / n


def counted_run(client, make_project, scratch) -> tuple[dict, dict[str, list[tuple[float, float]]], str]:
    """Five interleaved repetitions per variant, the agent's ~10% slower to send and failing 3% against
    1%: (the analysed run, per variant each repetition's (throughput, error rate) from numpy, token)."""
    slug, token = make_project()
    rng = np.random.default_rng(515)
    files, truth = [], {"baseline": [], "agent": []}
    for rep in range(5):
        for i, (variant, gap, error_p) in enumerate((("baseline", 2.0, 0.01), ("agent", 2.2, 0.03))):
            path = scratch / f"{variant}-{rep + 1}.jtl"
            truth[variant].append(write_counted(path, rng, start_ms=T0 + (rep * 2 + i) * 60_000,
                                                gap_ms=gap * (1 + rng.normal(0, 0.02)), error_p=error_p))
            files.append((variant, path))
    r = upload(client, slug, token, files, {"agent_version": "1.0.0", "reference": "baseline"})
    assert r.status_code == 202, r.text
    return wait_analysed(client, r.json()["run"], timeout=120), truth, token


def test_throughput_and_error_rate_are_compared_over_repetitions(client, worker, make_project, scratch):
    """Each repetition's throughput and error rate is one value, compared paired by position (as scipy's
    ttest_rel), not one value per side without an interval."""
    run, truth, _ = counted_run(client, make_project, scratch)

    for metric, k in (("throughput", 0), ("error_rate", 1)):
        body = client.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": metric})
        assert body.status_code == 200, body.text
        res = next(i["result"] for i in body.json()["items"] if i["cell"]["scenario"] == "GET /api")
        ref, var = [t[k] for t in truth["baseline"]], [t[k] for t in truth["agent"]]
        assert res["repetitions"]["reference"] == pytest.approx(ref, rel=1e-9)
        assert res["repetitions"]["variant"] == pytest.approx(var, rel=1e-9)
        assert res["repetitions"]["reference_positions"] == [0, 2, 4, 6, 8]
        assert res["method"] == "paired-t-repetitions" and (res["n_ref"], res["n_var"]) == (5, 5)
        t = stats.ttest_rel(var, ref)
        ci = t.confidence_interval(0.95)
        assert (res["ci_low"], res["ci_high"]) == (pytest.approx(ci.low, rel=1e-6), pytest.approx(ci.high, rel=1e-6))
        assert res["p_value"] == pytest.approx(t.pvalue, rel=1e-6)
        assert res["worse"] is True, res        # fewer requests per second, more of them failing
    # The compare view answers the error rate too (it was refused as an unknown metric).
    cmp = client.get("/api/v1/compare", params={"a": run["slug"], "b": run["slug"], "a_variant": "baseline",
                                                 "b_variant": "agent", "metric": "error_rate"})
    assert cmp.status_code == 200, cmp.text
    row = next(i for i in cmp.json()["items"] if i["cell"]["scenario"] == "GET /api")
    assert row["result"]["repetitions"]["variant"] == pytest.approx([t[1] for t in truth["agent"]], rel=1e-9)
    # Each cell's p-value is also given adjusted over every cell of the answer (Benjamini-Hochberg).
    items = cmp.json()["items"]
    assert len(items) >= 2
    assert [i["p_adjusted"] for i in items] == pytest.approx(benjamini_hochberg([i["result"]["p_value"] for i in items]))
    # ... and so does its chart, which the compare page links under the table (it answered 422).
    chart = client.get("/api/v1/compare/chart.svg", params={"a": run["slug"], "b": run["slug"], "a_variant": "baseline",
                                                            "b_variant": "agent", "metric": "error_rate"})
    assert chart.status_code == 200 and chart.headers["content-type"].startswith("image/svg+xml"), chart.text
    assert "Error rate" in chart.text or "error_rate" in chart.text


def test_the_cli_compares_with_the_servers_intervals_and_fails_on_worse(client, live_api, worker, make_project,
                                                                       scratch):
    """`benchtrail compare` prints the API's comparison (interval and verdict per cell, not bare
    differences) and, with --fail-on-worse, exits 5 naming the worse cells; an A/A comparison exits 0."""
    import json
    import os
    import subprocess

    from infra.localstack import VENV_BIN

    run, truth, token = counted_run(client, make_project, scratch)
    env = {**os.environ, "BENCHTRAIL_URL": live_api, "BENCHTRAIL_TOKEN": token}
    cli = [str(VENV_BIN / "benchtrail"), "compare", run["slug"], run["slug"], "--a-variant", "baseline"]

    done = subprocess.run([*cli, "--b-variant", "agent", "--metric", "throughput", "--metric", "error_rate", "--json"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rows = {(i["metric"], i["cell"]["scenario"]): i["result"] for i in json.loads(done.stdout)["items"]}
    for metric, k in (("throughput", 0), ("error_rate", 1)):
        ci = stats.ttest_rel([t[k] for t in truth["agent"]], [t[k] for t in truth["baseline"]]).confidence_interval()
        res = rows[(metric, "GET /api")]
        assert (res["ci_low"], res["ci_high"]) == (pytest.approx(ci.low, rel=1e-6), pytest.approx(ci.high, rel=1e-6))

    # The gate adjusts over every cell of every metric asked: here scipy's p-values of both metrics together.
    gated = subprocess.run([*cli, "--b-variant", "agent", "--metric", "throughput", "--metric", "error_rate",
                            "--fail-on-worse", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert gated.returncode == 5, gated.stderr
    p = {metric: stats.ttest_rel([t[k] for t in truth["agent"]], [t[k] for t in truth["baseline"]]).pvalue
         for metric, k in (("throughput", 0), ("error_rate", 1))}
    items = json.loads(gated.stdout)["items"]
    assert {i["metric"] for i in items} == set(p) and len(items) >= 4
    assert [i["p_adjusted"] for i in items] == pytest.approx(benjamini_hochberg([p[i["metric"]] for i in items]),
                                                             rel=1e-6)

    text = subprocess.run([*cli, "--b-variant", "agent", "--metric", "throughput", "--fail-on-worse"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert text.returncode == 5, text.stderr
    ci = stats.ttest_rel([t[0] for t in truth["agent"]], [t[0] for t in truth["baseline"]]).confidence_interval()
    assert f"[{ci.low:.4g}, {ci.high:.4g}]" in text.stdout and "(worse)" in text.stdout, text.stdout
    assert "worse: agent / GET /api / " in " ".join(text.stderr.split()), text.stderr

    same = subprocess.run([*cli, "--b-variant", "baseline", "--metric", "throughput", "--fail-on-worse"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert same.returncode == 0 and "no difference" in same.stdout, same.stdout + same.stderr

    # `show` (and upload/run --wait) print each variant against the reference for the analysed metrics.
    shown = subprocess.run([str(VENV_BIN / "benchtrail"), "show", run["slug"]], env=env, capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "overhead against the reference" in shown.stdout
    lines = [ln for ln in shown.stdout.splitlines() if "baseline → agent" in ln and "throughput" in ln]
    assert len(lines) == 2 and all(f"[{ci.low:.4g}, {ci.high:.4g}]" in ln for ln in lines), shown.stdout


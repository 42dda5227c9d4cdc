"""The demo plan on the real stack: the runner runs hey against the Java demo service without and
with the OpenTelemetry agent (spans exported over OTLP to the demo sink), interleaved ABABAB, and the
API's overheads say what the agent costs. Its first load level only, to stay near 3 minutes."""

from __future__ import annotations

import json
import urllib.request

import pytest
import yaml

from infra.localstack import REPO
from tests.integration.test_runner import post_plan, start, wait_status

pytestmark = pytest.mark.slow


def _overheads(client, run_slug: str, metric: str) -> dict[tuple[str, str], dict]:
    r = client.get(f"/api/v1/runs/{run_slug}/overheads", params={"metric": metric})
    assert r.status_code == 200, r.text
    return {(o["cell"]["scenario"], o["cell"]["load_key"]): o["result"] for o in r.json()["items"]
            if o["variant"] == "agent"}


def test_the_demo_plan_measures_the_agent(client, make_project, start_runner, worker, java_demo, java_demo_sink):
    slug, token = make_project(role="admin")
    start_runner("demo", "runner-demo")
    baseline, agent = java_demo
    plan = yaml.safe_load((REPO / "examples/plans/demo-easeagent-quick.yaml").read_text())
    assert plan["order"] == "interleaved" and plan["repetitions"] >= 3
    plan["pool"], plan["loads"] = "demo", plan["loads"][:1]
    for v in plan["variants"]:
        url = baseline if v["name"] == "baseline" else agent
        v["target"], v["resources"]["url"] = url, f"{url}/metrics"
    post_plan(client, slug, token, plan)
    with urllib.request.urlopen(f"{java_demo_sink}/v1/traces/stats", timeout=5) as r:
        spans_before = json.load(r)["spans"]
    run_slug = start(client, slug, token, plan["name"], agent_version="2.10.0")
    run = wait_status(client, run_slug, ("completed", "failed", "cancelled"), 420)
    assert run["status"] == "completed", run["status_detail"]
    assert run["is_valid"], run["validity"]

    # the agent exported its spans for real: thousands reached the sink
    with urllib.request.urlopen(f"{java_demo_sink}/v1/traces/stats", timeout=5) as r:
        stats = json.load(r)
    assert stats["spans"] - spans_before > 1000 and stats["rejected"] == 0, stats

    load_key = next(iter({k for _, k in _overheads(client, run_slug, "latency_p75")}))
    latency = _overheads(client, run_slug, "latency_p75")
    three, ten = latency[("API-URI-owner-3spans", load_key)], latency[("API-URI-vets-10spans", load_key)]
    # Both endpoints: the agent is slower and every overhead carries its interval over the repetitions.
    # Significance is not asserted: with 3 + 3 short repetitions on 2 shared cores, the run-to-run spread
    # can make the interval reach below 0 even at +150% (measured), and which endpoint costs more is not
    # stable either (the service saturates at 10 connections; the agent's per-request cost dominates).
    for row in (three, ten):
        assert row["abs_diff"] > 0, row
        assert row["ci_low"] is not None and row["ci_low"] <= row["abs_diff"] <= row["ci_high"], row
    cpu = _overheads(client, run_slug, "cpu_pct")
    [cpu_row] = [r for (s, _), r in cpu.items() if s == "*"]
    assert cpu_row["ci_low"] is not None and cpu_row["ci_high"] is not None, cpu_row
    assert cpu_row["ci_low"] <= cpu_row["abs_diff"] <= cpu_row["ci_high"]

"""Plans run by real runners with real tools against real local targets, end to end through the API."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import datetime

import psutil
import pytest

from infra.localstack import wait_until
from tests.support.jtl import independent_cells
from tests.support.outputs import plain
from tests.support.api import auth as admin_headers
from tests.support.env import SHARED_RUNNER
from tests.support.api import hey_plan, post_plan, run_of, start, tool_processes, wait_status

pytestmark = pytest.mark.slow


def test_thread_groups_against_baseline_and_agent(client, make_project, runner_pool, worker, java_demo):
    slug, token = make_project(role="admin")
    baseline, agent = java_demo
    plan = {"version": 1, "name": "easeagent-style", "tool": "jmeter", "pool": runner_pool,
            "variants": [{"name": "baseline", "role": "reference", "target": baseline,
                          "resources": {"source": "prometheus", "url": f"{baseline}/metrics"}},
                         {"name": "agent", "target": agent,
                          "resources": {"source": "prometheus", "url": f"{agent}/metrics"}}],
            "scenarios": [{"name": "API-URI-owner-3spans", "path": "/api/gateway/owners/2"},
                          {"name": "API-URI-vets-10spans", "path": "/api/vet/vets"}],
            "loads": [{"threads": 10, "duration_s": 3}, {"threads": 20, "duration_s": 3},
                      {"threads": 50, "duration_s": 3}],
            "order": "simultaneous", "repetitions": 1,
            "criteria": [{"metric": "error_rate", "op": "<", "value": 1}]}
    post_plan(client, slug, token, plan)
    run_slug = start(client, slug, token, "easeagent-style", agent_version="1.0.0")
    run = wait_status(client, run_slug, ("completed", "failed", "cancelled"), 240)
    assert run["status"] == "completed", run["status_detail"]
    assert run["source"] == "manual" and run["progress"]["runner"] == SHARED_RUNNER

    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l for l in run["loads"]}
    assert sorted(l["value"] for l in run["loads"]) == [10, 20, 50]
    assert {l["kind"] for l in run["loads"]} == {"threads"}
    totals = [c for c in run["cells"] if scenarios[c["scenario_id"]] == "*"]
    assert {(variants[c["variant_id"]], loads[c["load_id"]]["value"]) for c in totals} == \
        {(v, t) for v in ("baseline", "agent") for t in (10, 20, 50)}
    for c in totals:
        assert c["count"] > 0 and c["throughput"] > 0 and c["latency_p75"] > 0
        assert c["cpu_pct"] is not None and c["cpu_pct"] > 0
        assert c["heap_mb"] is not None and c["heap_mb"] > 0 and c["rss_mb"] > 0

    # Every per-scenario cell equals an independent computation on the raw JTL of its variant and load.
    checked = 0
    for f in run["files"]:
        if f["format"] != "jmeter-csv":
            continue
        raw = client.get(f["download_url"]).content
        assert f["filename"].endswith(".zst")  # runners send their outputs zstd-compressed
        raw = plain(raw)
        path = __import__("pathlib").Path(os.environ["BENCHTRAIL_DATA_DIR"]) / f"check-{f['id']}.jtl"
        path.write_bytes(raw)
        for (label, threads), exp in independent_cells(path).items():
            cell = next(c for c in run["cells"] if variants[c["variant_id"]] == f["variant"]
                        and scenarios[c["scenario_id"]] == label and loads[c["load_id"]]["value"] == threads)
            assert cell["count"] == exp["count"] and cell["errors"] == exp["errors"]
            assert cell["latency_p75"] == pytest.approx(exp["latency_p75"], rel=1e-3)
            checked += 1
    assert checked == 2 * 3 * 2
    assert run["criteria"] and all("criterion" in c for c in run["criteria"])
    assert {c["load"] for c in run["criteria"]} == {"10 threads", "20 threads", "50 threads"}


def test_plan_runs_only_on_its_pool(client, make_project, start_runner, worker, go_target):
    slug, token = make_project(role="admin")
    runner_a = start_runner("pool-a", "runner-a")
    start_runner("pool-b", "runner-b")
    plan = hey_plan("on-b", "pool-b", go_target, concurrency=4, requests=400)
    plan["warmup_s"] = 1
    post_plan(client, slug, token, plan)
    run_slug = start(client, slug, token, "on-b")
    run = wait_status(client, run_slug, ("completed", "failed"), 120)
    assert run["status"] == "completed", run["status_detail"]
    assert run["progress"]["runner"] == "runner-b"
    assert run["progress"]["step"] == "ingested"  # the run's last step, not "ingesting" once it completed
    env = run["environment_detail"]  # recorded by the runner for its host
    assert env["cpus"] == os.cpu_count() and env["memory_mb"] == psutil.virtual_memory().total // 2**20
    assert run_slug not in runner_a.output()
    cell = next(c for c in run["cells"] if c["count"] is not None and c["scenario_id"] ==
                next(s["id"] for s in run["scenarios"] if s["name"] == "slow"))
    assert cell["count"] == 400  # the warm-up is not in the cell...
    series = client.get(f"/api/v1/runs/{run_slug}/series", params={"metric": "throughput"}).json()["items"]
    line = next(x for x in series if x["scenario_id"] == cell["scenario_id"])
    in_series = sum(v * line["interval_ms"] / 1000 for v in line["values"])
    assert in_series > 400 + 10  # ...but it is in the series
    # Each hey file's offsets count from its own start; the runner says when each step started, so the
    # warm-up and the measurement sit at their clock times within the run (not both at 0).
    started, finished = (datetime.fromisoformat(run[k]).timestamp() * 1000 for k in ("started_at", "finished_at"))
    assert started - 1000 <= min(line["t_ms"]) and max(line["t_ms"]) <= finished + 1000


def test_killed_runner_fails_the_run_and_nothing_restarts(client, make_project, start_runner, worker, beat,
                                                          go_target):
    slug, token = make_project(role="admin")
    runner = start_runner("pool-kill", "runner-kill")
    post_plan(client, slug, token, hey_plan("long", "pool-kill", go_target, concurrency=2, duration_s=60))
    run_slug = start(client, slug, token, "long")
    wait_status(client, run_slug, ("running",), 60)
    port = go_target.rsplit(":", 1)[1]
    wait_until(lambda: tool_processes(f":{port}/slow"), 30, "hey to start")
    os.killpg(runner.proc.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    run = wait_status(client, run_slug, ("failed",), 30)
    assert time.monotonic() - killed_at < 5 + 2 + 5  # heartbeat timeout + sweeper interval + slack
    assert "stopped reporting" in run["status_detail"]["reason"]
    for p in tool_processes(f":{port}/slow"):  # the tool died with its runner's process group
        p.wait(5)
    # Redis would redeliver the unacknowledged message to the next runner of the pool: do it now.
    second = start_runner("pool-kill", "runner-kill-2")
    body = client.get(f"/api/v1/projects/{slug}/plans/long").json()["items"][0]["body"]
    from benchtrail import jobs
    jobs.producer().send_task("runs.execute", args=[run_slug, body], queue="runner.pool-kill")
    wait_until(lambda: "run not claimable, skipped" in second.output() and run_slug in second.output(), 30,
               "the second runner to refuse the redelivered run")
    again = run_of(client, run_slug)
    assert again["status"] == "failed" and again["progress"]["runner"] == "runner-kill"
    assert not tool_processes(f":{port}/slow")


def test_cancel_stops_the_tools_within_5s(client, make_project, runner_pool, worker, go_target):
    slug, token = make_project(role="admin")
    post_plan(client, slug, token, hey_plan("cancel-me", runner_pool, go_target, concurrency=3, duration_s=60))
    run_slug = start(client, slug, token, "cancel-me")
    wait_status(client, run_slug, ("running",), 60)
    port = go_target.rsplit(":", 1)[1]
    procs = wait_until(lambda: tool_processes(f":{port}/slow"), 30, "hey to start")
    r = client.post(f"/api/v1/runs/{run_slug}/cancel", headers=admin_headers(token))
    assert r.status_code == 200, r.text
    asked = time.monotonic()
    gone, alive = psutil.wait_procs(procs, timeout=5)
    assert not alive, f"tool processes still running 5 s after cancel: {[p.pid for p in alive]}"
    assert time.monotonic() - asked <= 5.5
    run = wait_status(client, run_slug, ("cancelled",), 15)
    assert run["cells"] == [] and run["files"] == []


def test_targets_outside_the_allow_list_are_refused(client, make_project):
    slug, token = make_project(role="admin")
    plan = hey_plan("elsewhere", "default", "http://10.1.2.3:8080", concurrency=1, requests=1)
    del plan["variants"][0]["resources"]
    r = client.post(f"/api/v1/projects/{slug}/plans", content=json.dumps(plan),
                    headers={**admin_headers(token), "Content-Type": "application/json"})
    assert r.status_code == 422 and "allow-list" in r.json()["detail"]


def test_plan_validation_names_the_field(client, make_project):
    slug, token = make_project(role="admin")
    r = client.post(f"/api/v1/projects/{slug}/plans", content="version: 1\nname: x\ntool: gatling\n",
                    headers={**admin_headers(token), "Content-Type": "application/yaml"})
    assert r.status_code == 422
    assert "tool" in r.json()["detail"]


def test_cli_runs_a_plan_and_waits(client, make_project, runner_pool, worker, go_target, live_api, scratch):
    import subprocess

    from infra.localstack import VENV_BIN

    slug, token = make_project(role="admin")
    plan = scratch / "plan.yaml"
    plan.write_text(
        f"version: 1\nname: from-cli\ntool: hey\npool: {runner_pool}\n"
        f"variants:\n  - {{name: target, role: reference, target: '{go_target}'}}\n"
        "scenarios:\n  - {name: ok, path: /ok}\nloads:\n  - {concurrency: 2, requests: 300}\n")
    out = subprocess.run([str(VENV_BIN / "benchtrail"), "run", str(plan), "--project", slug, "--wait", "--json",
                          "--agent-version", "9.9.9"],
                         env={**os.environ, "BENCHTRAIL_URL": live_api, "BENCHTRAIL_TOKEN": token},
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["is_valid"] is True
    run = run_of(client, result["run"])
    assert run["agent_version"] == "9.9.9"
    # Plans default to 3 interleaved repetitions: the cell holds all three repetitions' requests.
    assert any(c["count"] == 3 * 300 for c in run["cells"])

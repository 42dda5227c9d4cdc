"""The demo plan on the real stack: the runner runs hey against the Java demo service without and
with the OpenTelemetry agent (spans exported over OTLP to the demo sink), interleaved, one endpoint per
step, and the API's overheads say what the agent costs. The issue's claim, asserted from the API: the
10-span endpoint's latency overhead is significant (its 95% interval over the repetitions excludes 0)
and larger than the 3-span endpoint's, and the CPU overhead comes with its interval.

`test_the_demo_plan_measures_the_agent` runs the plan on the test stack (about 3 minutes);
`test_make_up_demo_run` checks the run `make up` made (BENCHTRAIL_DEMO_URL=http://127.0.0.1:8400 and
BENCHTRAIL_DEMO_TOKEN=<admin token>; skipped without them)."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Callable

import httpx
import numpy as np
import psutil
import pytest
import yaml
from scipy import stats as sps

from infra.localstack import REPO, wait_until
from tests.support.api import post_plan, start, wait_status
from tests.support.runner import renice

pytestmark = pytest.mark.slow

THREE, TEN = "API-URI-owner-3spans", "API-URI-vets-10spans"
# Mean latency at one connection: per request, what the service and the load tool spent on it. hey writes
# latencies in 0.1 ms steps, so a repetition's P50/P75 moves in 0.1 ms jumps while the agent's span work is
# tens of µs; the mean of thousands of requests resolves it.
LATENCY = "latency_mean"

Overheads = Callable[[str], dict[tuple[str, str], dict]]


def _api_overheads(get: Callable[..., httpx.Response], run_slug: str) -> Overheads:
    def overheads(metric: str) -> dict[tuple[str, str], dict]:
        r = get(f"/api/v1/runs/{run_slug}/overheads", params={"metric": metric})
        assert r.status_code == 200, r.text
        return {(o["cell"]["scenario"], o["cell"]["load_key"]): o["result"] for o in r.json()["items"]
                if o["variant"] == "agent" and not o.get("process")}
    return overheads


def _paired(row: dict) -> tuple[np.ndarray, np.ndarray]:
    """The per-repetition values of an overhead row (reference, variant), in execution order when known."""
    ref = np.array(row["repetitions"]["reference"], dtype=float)
    var = np.array(row["repetitions"]["variant"], dtype=float)
    positions = row["repetitions"]["reference_positions"], row["repetitions"]["variant_positions"]
    if None not in positions[0] and None not in positions[1]:   # resource cells carry no positions
        ref, var = ref[np.argsort(positions[0])], var[np.argsort(positions[1])]
    return ref, var


def _check_interval(row: dict) -> None:
    """The API's interval is the t interval over the per-repetition values (recomputed with scipy)."""
    ref, var = _paired(row)
    assert len(ref) == len(var) >= 3, row
    res = sps.ttest_rel(var, ref) if row["method"] == "paired-t-repetitions" else sps.ttest_ind(var, ref)
    ci = res.confidence_interval()
    assert row["abs_diff"] == pytest.approx(var.mean() - ref.mean(), rel=1e-6, abs=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-6, abs=1e-9), row
    assert row["p_value"] == pytest.approx(res.pvalue, rel=1e-6, abs=1e-12), row


def check_demo_claim(overheads: Overheads) -> dict[str, dict]:
    """The issue's claim about the demo run, from the API's overheads; returns the rows it judged."""
    latency = overheads(LATENCY)
    [load_key] = {k for s, k in latency if s != "*"}
    three, ten = latency[(THREE, load_key)], latency[(TEN, load_key)]
    for name, row in ((THREE, three), (TEN, ten)):
        _check_interval(row)
        print(f"RESULT demo {name} {LATENCY} overhead {row['abs_diff'] * 1000:+.1f} µs "
              f"[{row['ci_low'] * 1000:+.1f}, {row['ci_high'] * 1000:+.1f}] ({row['rel_diff'] * 100:+.0f}%, "
              f"p {row['p_value']:.2g}, {row['method']}, {len(row['repetitions']['variant'])} repetitions)")
    # Interleaved with 5+ repetitions: the overheads are paired over the repetitions.
    assert three["method"] == ten["method"] == "paired-t-repetitions", (three["method"], ten["method"])
    # The 10-span endpoint's overhead is significant: its 95% interval excludes 0 ...
    assert ten["ci_low"] > 0 and ten["p_value"] < 0.05, ten
    # ... and larger than the 3-span endpoint's. Both come from the same repetitions (each repetition loads
    # the 3-span endpoint, then the 10-span one, each on baseline then agent): per repetition, the 10-span
    # overhead minus the 3-span one, and its mean over the repetitions is above 0.
    ref3, var3 = _paired(three)
    ref10, var10 = _paired(ten)
    extra = (var10 - ref10) - (var3 - ref3)
    assert ten["abs_diff"] > three["abs_diff"], (three, ten)
    assert extra.mean() == pytest.approx(ten["abs_diff"] - three["abs_diff"], rel=1e-6, abs=1e-9)
    t = sps.ttest_1samp(extra, 0.0, alternative="greater")
    print(f"RESULT demo 10-span minus 3-span overhead {extra.mean() * 1000:+.1f} µs per request "
          f"(paired over {len(extra)} repetitions, one-sided p {t.pvalue:.2g})")

    cpu = overheads("cpu_pct")
    [cpu_row] = [r for (s, _), r in cpu.items() if s == "*"]
    assert cpu_row["ci_low"] is not None and cpu_row["ci_high"] is not None, cpu_row
    assert cpu_row["ci_low"] <= cpu_row["abs_diff"] <= cpu_row["ci_high"], cpu_row
    _check_interval(cpu_row)
    print(f"RESULT demo cpu_pct overhead {cpu_row['abs_diff']:+.1f} points [{cpu_row['ci_low']:+.1f}, "
          f"{cpu_row['ci_high']:+.1f}] (p {cpu_row['p_value']:.2g})")
    return {"three": three, "ten": ten, "cpu": cpu_row}


def _renice_tree(pid: int, nice: int) -> None:
    """The runner at the demo services' priority, as `make up` starts it (infra/scripts/stack.py)."""
    proc = psutil.Process(pid)
    renice([proc.pid, *(child.pid for child in proc.children(recursive=True))], nice)


@pytest.mark.timing
@pytest.mark.timeout(900)   # 32 measured 3 s steps, warm-ups and two JVMs started on 2 shared cores
def test_the_demo_plan_measures_the_agent(client, make_project, start_runner, worker, warm_java_demo, java_demo_sink):
    slug, token = make_project(role="admin")
    runner = start_runner("demo", "runner-demo")
    if os.geteuid() == 0:
        _renice_tree(runner.proc.pid, int(os.environ.get("DEMO_NICE", "-20")))
    baseline, agent = warm_java_demo
    plan = yaml.safe_load((REPO / "examples/plans/demo-easeagent-quick.yaml").read_text())
    assert plan["order"] == "interleaved" and plan["repetitions"] >= 5 and plan["scenario_steps"] == "separate"
    # The plan as `make up` runs it (8 repetitions of 3 s). Beside the other test processes on the same two cores its
    # 10-span interval stays well above 0 (+208.5 µs [+154.1, +263.0] in a fresh-clone `make test`) since the demo
    # services, the runner and hey get their priority in their sessions' scheduling groups too (infra/demo/
    # at-priority.sh, benchtrail_runner.process.session_priority): before, their nice -20 held only inside each
    # session, the other processes' bursts moved a step's mean latency by hundreds of µs, and this test needed 20
    # repetitions of 2 s (whose interval still reached below 0 once, [-0.0, +357.6]).
    plan["pool"] = "demo"
    for v in plan["variants"]:
        url = baseline if v["name"] == "baseline" else agent
        v["target"], v["resources"]["url"] = url, f"{url}/metrics"
    post_plan(client, slug, token, plan)
    spans_before = _sink_stats(java_demo_sink)["spans"]
    run_slug = start(client, slug, token, plan["name"], agent_version="2.10.0")
    run = wait_status(client, run_slug, ("completed", "failed", "cancelled"), 840)
    assert run["status"] == "completed", run["status_detail"]
    assert run["is_valid"], run["validity"]

    # The agent exported every span for real: at least as many reached the sink as the measured steps made
    # (the plan's warm-ups make more), none rejected. A dropped span costs the agent almost nothing, so a
    # queue that overflowed would leave the 10-span endpoint's overhead near the 3-span one's.
    [agent_id] = [v["id"] for v in run["variants"] if v["name"] == "agent"]
    # The endpoints' own cells: the run also has a total row over both scenarios.
    spans_of = {s["id"]: {THREE: 3, TEN: 10}[s["name"]] for s in run["scenarios"] if s["name"] in (THREE, TEN)}
    expected = sum(c["count"] * spans_of[c["scenario_id"]] for c in run["cells"]
                   if c["variant_id"] == agent_id and c["scenario_id"] in spans_of)
    stats = wait_until(_sink_settled(java_demo_sink, spans_before + expected), 60,
                       "the demo's OTLP sink to receive every span or stop receiving", interval=1.0)
    print(f"RESULT demo spans at the sink {stats['spans'] - spans_before} of {expected} made in measured steps")
    check_demo_claim(_api_overheads(client.get, run_slug))
    assert stats["rejected"] == 0, stats
    assert stats["spans"] - spans_before >= expected, "the agent's batch span processor dropped spans"


def test_make_up_demo_run():
    """The newest completed run of `make up`'s demo (project easeagent-demo, the newest agent version)."""
    url, token = os.environ.get("BENCHTRAIL_DEMO_URL"), os.environ.get("BENCHTRAIL_DEMO_TOKEN")
    if not url or not token:
        pytest.skip("BENCHTRAIL_DEMO_URL / BENCHTRAIL_DEMO_TOKEN not set (a running `make up`)")
    versions = [v for v in (REPO / "infra/demo/agent-versions.txt").read_text().split()
                if v and not v.startswith("#")]
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        runs = http.get("/api/v1/projects/easeagent-demo/runs", params={"status": "completed"})
        assert runs.status_code == 200, runs.text
        newest = [r for r in runs.json()["items"] if r.get("agent_version") == versions[-1]]
        assert newest, runs.json()
        run = http.get(f"/api/v1/runs/{newest[0]['slug']}").json()
        assert run["is_valid"], run["validity"]
        check_demo_claim(_api_overheads(http.get, run["slug"]))


def _sink_stats(sink: str) -> dict:
    with urllib.request.urlopen(f"{sink}/v1/traces/stats", timeout=5) as r:
        return json.load(r)


def _sink_settled(sink: str, target: int) -> Callable[[], dict | None]:
    """For wait_until (polling each second): the sink's counts once `target` spans have reached it, or once
    the count stayed the same for 7 polls, longer than the batch span processor's 5 s schedule delay (the
    agent's queue is empty: what did not arrive was dropped)."""
    seen: list[int] = []

    def settled() -> dict | None:
        stats = _sink_stats(sink)
        seen.append(stats["spans"])
        done = stats["spans"] >= target or (len(seen) >= 7 and len(set(seen[-7:])) == 1)
        return stats if done else None

    return settled

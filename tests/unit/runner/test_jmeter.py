from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from benchtrail_runner.jmx import JTL_PROPERTIES, build_jmx
from benchtrail.plans.model import load_plan, steps
from benchtrail_runner.process import Launch, run_together
from benchtrail_runner.tools import expected_samples

from infra.localstack import REPO
from tests.support.runner import Target, require_tool

SHOP_JMX = REPO / "tests" / "fixtures" / "user-shop.jmx"


def test_generated_jmx_two_thread_groups(target: Target, tmp_path: Path) -> None:
    exe = require_tool("jmeter")
    plan = load_plan(f"""
version: 1
name: jmeter test
tool: jmeter
variants: [{{name: a, target: "{target.url}"}}]
scenarios:
  - {{name: ok, path: /ok}}
  - name: echo
    method: POST
    path: /echo
    headers: {{Content-Type: application/json}}
    body: '{{"x": 1}}'
loads:
  - {{threads: 2, loops: 15}}
  - {{threads: 3, loops: 10}}
""")
    jmx = tmp_path / "plan.jmx"
    jmx.write_text(build_jmx(plan.variants[0], plan.scenarios, plan.loads))
    jtl = tmp_path / "out.jtl"
    argv = [exe, "-n", "-t", str(jmx), "-l", str(jtl), "-j", str(tmp_path / "jmeter.log"),
            *[f"-J{k}={v}" for k, v in JTL_PROPERTIES.items()]]
    [fin] = run_together([Launch(argv, tmp_path / "jmeter.out")], tool="jmeter", timeout_s=120)
    assert fin.returncode == 0, (tmp_path / "jmeter.out").read_text()
    with open(jtl, newline="") as f:
        rows = list(csv.DictReader(f))
    groups = Counter((r["threadName"].rsplit(" ", 1)[0], r["label"]) for r in rows)
    # threads x loops samples per sampler, in a thread group named after its load level
    assert groups == {("TG 2", "ok"): 30, ("TG 2", "echo"): 30, ("TG 3", "ok"): 30, ("TG 3", "echo"): 30}
    assert {r["grpThreads"] for r in rows if r["threadName"].startswith("TG 3")} <= {"1", "2", "3"}
    assert all(r["success"] == "true" for r in rows)
    assert {"URL", "Latency", "Connect", "allThreads"} <= set(rows[0])
    echo_bytes = {r["bytes"] for r in rows if r["label"] == "echo"}
    assert len(echo_bytes) == 1    # the body came back the same every time


def test_progress_counts_samples_only_where_each_loop_has_one_per_scenario() -> None:
    def plan(scenarios: str, load: str) -> str:
        return f"""
version: 1
name: progress
tool: jmeter
variants: [{{name: a, role: reference, target: "http://127.0.0.1:1"}}, {{name: b, target: "http://127.0.0.1:2"}}]
scenarios: [{scenarios}]
loads: [{load}]
order: simultaneous
repetitions: 1
"""
    generated = load_plan(plan("{name: ok, path: /ok}, {name: echo, path: /echo}", "{threads: 3, loops: 20}"))
    [step] = steps(generated)
    assert expected_samples(generated, step) == 3 * 20 * 2 * 2   # threads x loops x scenarios x variants
    # a user's JMX: its samplers per loop are its own (tests/fixtures/user-shop.jmx has three)
    users = load_plan(plan(f"{{name: shop, jmx: {SHOP_JMX}}}", "{threads: 3, loops: 20}"))
    assert [expected_samples(users, s) for s in steps(users)] == [None]
    timed = load_plan(plan("{name: ok, path: /ok}", "{threads: 3, duration_s: 2}"))
    assert [expected_samples(timed, s) for s in steps(timed)] == [None]

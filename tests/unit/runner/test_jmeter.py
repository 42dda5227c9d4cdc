from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from benchtrail_runner.jmx import JTL_PROPERTIES, build_jmx
from benchtrail.plans.model import load_plan
from benchtrail_runner.process import Launch, run_together

from tests.support.runner import Target, require_tool


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

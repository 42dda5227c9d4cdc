from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from benchtrail_runner.execute import execute_plan
from benchtrail.plans.model import load_plan

from .conftest import Target, require_tool


def test_interleaved_plan_with_warmup_and_criteria(target: Target, tmp_path: Path) -> None:
    require_tool("hey")
    plan = load_plan(f"""
version: 1
name: interleaved
tool: hey
variants:
  - {{name: ref, role: reference, target: "{target.url}", resources: {{source: process}}}}
  - {{name: other, target: "{target.url}"}}
scenarios: [{{name: slow, path: /slow}}]
loads: [{{concurrency: 4, requests: 200}}]
warmup_s: 0.5
repetitions: 2
order: interleaved
sampling: {{interval_s: 0.2}}
criteria:
  - {{metric: latency_p95, op: "<", value: 1000}}
  - {{metric: latency_p50, op: "<", value: 4}}
""")
    seen_steps = []
    result = execute_plan(plan, tmp_path, on_step=lambda s: seen_steps.append((s.step.phase, s.step.variants)))
    assert seen_steps == [("warmup", ("ref",)), ("warmup", ("other",)), ("measure", ("ref",)),
                          ("measure", ("other",)), ("measure", ("ref",)), ("measure", ("other",))]
    files = result.files()
    assert len(files) == 4 and all(step.phase == "measure" for _, step in files)
    for out, _ in files:
        with open(out.path, newline="") as f:
            latencies = np.array([float(r["response-time"]) * 1000 for r in csv.DictReader(f)])
        assert latencies.size == 200
        p95 = float(np.percentile(latencies, 95))
        judged = [c for s in result.steps for c in s.criteria
                  if c.criterion == "latency_p95 < 1000" and c.step == _.index]
        assert len(judged) == 1 and abs(judged[0].observed - p95) < 1e-9 and judged[0].ok
    # /slow sleeps 5 ms, so a p50 under 4 ms must fail and make the plan fail
    p50 = [c for s in result.steps for c in s.criteria if c.criterion.startswith("latency_p50")]
    assert len(p50) == 4 and not any(c.ok for c in p50)
    assert not result.passed
    measured = [s for s in result.steps if s.step.phase == "measure"]
    assert all(set(s.resources) == ({"ref"} if s.step.variants == ("ref",) else set()) for s in measured)
    assert result.manifest()["steps"][2]["outputs"][0]["count"] == 200

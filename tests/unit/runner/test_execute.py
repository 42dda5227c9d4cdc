from __future__ import annotations

import csv
from pathlib import Path

from benchtrail_runner.execute import execute_plan
from benchtrail.plans.model import load_plan

from .conftest import Target, require_tool


def test_interleaved_plan_with_warmup(target: Target, tmp_path: Path) -> None:
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
            assert sum(1 for _ in csv.DictReader(f)) == 200
    # The runner judges nothing: criteria and validity are ingest's (tests/integration/test_runner_parity.py).
    assert not hasattr(result, "passed") and not any(hasattr(s, "criteria") for s in result.steps)
    measured = [s for s in result.steps if s.step.phase == "measure"]
    assert all(set(s.resources) == ({"ref"} if s.step.variants == ("ref",) else set()) for s in measured)
    assert result.manifest()["steps"][2]["outputs"][0]["count"] == 200

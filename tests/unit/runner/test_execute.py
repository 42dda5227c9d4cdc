from __future__ import annotations

import csv
from pathlib import Path

from benchtrail_runner.execute import execute_plan
from benchtrail.plans.model import load_plan

from tests.support.runner import Target, require_tool


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


def test_separate_scenario_steps_run_one_hey_per_step(target: Target, tmp_path: Path) -> None:
    require_tool("hey")
    plan = load_plan(f"""
version: 1
name: separate
tool: hey
variants:
  - {{name: ref, role: reference, target: "{target.url}"}}
  - {{name: other, target: "{target.url}"}}
scenarios: [{{name: ok, path: /ok}}, {{name: slow, path: /slow}}]
loads: [{{concurrency: 2, requests: 50}}]
repetitions: 2
scenario_steps: separate
""")
    result = execute_plan(plan, tmp_path)
    # each measured step ran hey once, for its own scenario against its own variant
    ran = [(s.step.variants, s.step.scenarios, [(o.variant, o.scenario) for o in s.run.outputs])
           for s in result.steps if s.run is not None]
    assert ran == [(("ref",), ("ok",), [("ref", "ok")]), (("other",), ("ok",), [("other", "ok")]),
                   (("ref",), ("slow",), [("ref", "slow")]), (("other",), ("slow",), [("other", "slow")])] * 2
    for out, _ in result.files():
        with open(out.path, newline="") as f:
            assert sum(1 for _ in csv.DictReader(f)) == 50

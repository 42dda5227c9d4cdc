from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchtrail.plans.model import PlanError, load_plan, steps

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "plans"

BASE = {
    "version": 1, "name": "t", "tool": "jmeter",
    "variants": [{"name": "baseline", "role": "reference", "target": "http://127.0.0.1:18081"},
                 {"name": "agent", "target": "http://127.0.0.1:18082"}],
    "scenarios": [{"name": "owner", "path": "/api/gateway/owners/2"}],
    "loads": [{"threads": 10, "duration_s": 30}, {"threads": 20, "duration_s": 30}],
}


def problems(data: dict) -> list[tuple[str, str]]:
    with pytest.raises(PlanError) as info:
        load_plan(json.dumps(data))
    return info.value.problems


def test_example_plans_load() -> None:
    files = sorted([*EXAMPLES.glob("*.yaml"), *EXAMPLES.glob("*.json")])
    assert len(files) >= 4
    tools = {load_plan(f.read_text()).tool for f in files}
    assert tools == {"jmeter", "hey", "constant-rate"}
    # The examples follow the default: interleaved repetitions, so run-to-run noise is measured.
    assert {load_plan(f.read_text()).order for f in files} == {"interleaved"}


def test_json_plan_and_step_order() -> None:
    plan = load_plan(json.dumps({**BASE, "warmup_s": 5, "repetitions": 2, "order": "interleaved"}))
    order = [(s.phase, s.load.threads, s.repetition, s.variants) for s in steps(plan)]
    assert order[:6] == [
        ("warmup", 10, 0, ("baseline",)), ("warmup", 10, 0, ("agent",)),
        ("measure", 10, 1, ("baseline",)), ("measure", 10, 1, ("agent",)),
        ("measure", 10, 2, ("baseline",)), ("measure", 10, 2, ("agent",)),
    ]
    assert len(order) == 12
    assert steps(plan)[0].load.duration_s == 5


def test_separate_scenario_steps_load_one_scenario_each() -> None:
    two = [{"name": "owner", "path": "/api/gateway/owners/2"}, {"name": "vets", "path": "/api/vet/vets"}]
    plan = load_plan(json.dumps({**BASE, "scenarios": two, "loads": BASE["loads"][:1], "warmup_s": 5,
                                 "repetitions": 2, "scenario_steps": "separate"}))
    order = [(s.phase, s.repetition, s.variants, s.scenarios) for s in steps(plan)]
    assert order == [
        ("warmup", 0, ("baseline",), ()), ("warmup", 0, ("agent",), ()),
        ("measure", 1, ("baseline",), ("owner",)), ("measure", 1, ("agent",), ("owner",)),
        ("measure", 1, ("baseline",), ("vets",)), ("measure", 1, ("agent",), ("vets",)),
        ("measure", 2, ("baseline",), ("owner",)), ("measure", 2, ("agent",), ("owner",)),
        ("measure", 2, ("baseline",), ("vets",)), ("measure", 2, ("agent",), ("vets",)),
    ]
    # the default loads every scenario in each step
    together = load_plan(json.dumps({**BASE, "scenarios": two}))
    assert together.scenario_steps == "together" and all(s.scenarios == () for s in steps(together))
    assert problems({**BASE, "scenario_steps": "alone"})[0][0] == "scenario_steps"


def test_missing_load_kind_names_the_field() -> None:
    data = {**BASE, "loads": [{"threads": 10, "duration_s": 30}, {"concurrency": 5, "duration_s": 3}]}
    found = problems(data)
    assert ("loads[1].threads", "required by tool 'jmeter'") in found
    assert any(path == "loads[1].concurrency" for path, _ in found)


def test_schema_errors_name_the_field() -> None:
    data = {**BASE, "tool": "gatling"}
    assert problems(data)[0][0] == "tool"
    bad_variant = {**BASE, "variants": [{"name": "a", "target": "ftp://x", "colour": "red"}]}
    found = dict(problems(bad_variant))
    assert "variants[0]" in found and "colour" in found["variants[0]"]
    assert "variants[0].target" in found
    bad_load = {**BASE, "loads": [{"threads": 0, "duration_s": 1}]}
    assert problems(bad_load)[0][0] == "loads[0].threads"


def test_rules_name_the_field() -> None:
    two_refs = {**BASE, "variants": [{**v, "role": "reference"} for v in BASE["variants"]]}
    assert problems(two_refs) == [("variants[1].role", "only one variant can be the reference")]
    hey = {**BASE, "tool": "hey", "loads": [{"concurrency": 10}]}
    assert problems(hey)[0][0] == "loads[0]"
    criteria = {**BASE, "criteria": [{"metric": "latency_p95", "op": "<", "value": 50, "variant": "nope"}]}
    assert problems(criteria) == [("criteria[0].variant", "no variant named 'nope'")]


def test_virtual_users_are_constant_rate_fields_and_none_ready_beyond_the_bound() -> None:
    rate = {**BASE, "tool": "constant-rate", "loads": [{"rate": 1000, "duration_s": 5, "max_vus": 200}]}
    assert load_plan(json.dumps({**rate, "loads": [{**rate["loads"][0], "preallocated_vus": 200}]})) \
        .loads[0].preallocated_vus == 200
    assert problems({**rate, "loads": [{**rate["loads"][0], "preallocated_vus": 201}]}) == \
        [("loads[0].preallocated_vus", "201 is more than max_vus (200)")]
    jmeter = {**BASE, "loads": [{"threads": 10, "duration_s": 30, "preallocated_vus": 5}]}
    assert problems(jmeter) == [("loads[0].preallocated_vus", "only used by tool 'constant-rate'")]
    assert problems({**rate, "loads": [{"rate": 1000, "duration_s": 5, "preallocated_vus": 0}]})[0][0] == \
        "loads[0].preallocated_vus"


def test_yaml_syntax_error_has_a_line() -> None:
    with pytest.raises(PlanError) as info:
        load_plan("version: 1\nname: [unclosed\n")
    assert info.value.problems[0][0].startswith("line ")

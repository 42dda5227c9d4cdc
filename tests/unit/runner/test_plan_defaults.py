"""Plans default to 3 interleaved repetitions per variant; explicit settings keep their meaning."""

from __future__ import annotations

import json

from benchtrail.plans.model import load_plan, schema, steps

BASE = {
    "version": 1, "name": "t", "tool": "hey",
    "variants": [{"name": "baseline", "role": "reference", "target": "http://127.0.0.1:18081"},
                 {"name": "agent", "target": "http://127.0.0.1:18082"}],
    "scenarios": [{"name": "ok", "path": "/ok"}],
    "loads": [{"concurrency": 10, "requests": 1000}],
}


def test_default_is_three_interleaved_repetitions_per_variant() -> None:
    plan = load_plan(json.dumps(BASE))
    assert (plan.repetitions, plan.order) == (3, "interleaved")
    order = [(s.repetition, s.variants) for s in steps(plan)]
    assert order == [(1, ("baseline",)), (1, ("agent",)), (2, ("baseline",)), (2, ("agent",)),
                     (3, ("baseline",)), (3, ("agent",))]
    # The documented schema says the same.
    props = schema()["properties"]
    assert (props["repetitions"]["default"], props["order"]["default"]) == (3, "interleaved")


def test_explicit_single_simultaneous_plan_is_unchanged() -> None:
    plan = load_plan(json.dumps({**BASE, "repetitions": 1, "order": "simultaneous"}))
    assert [(s.repetition, s.variants) for s in steps(plan)] == [(1, ("baseline", "agent"))]

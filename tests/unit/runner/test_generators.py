"""Splitting a plan's load over several generators (plan `generators`): counts, rates, validation."""

from __future__ import annotations

import json

import pytest
from benchtrail.plans.model import PlanError, load_plan, share_load, share_plan, split_count
from benchtrail_runner.plan import Load, parse_plan

HEY = {
    "version": 1, "name": "g", "tool": "hey", "pool": "p", "generators": 3,
    "variants": [{"name": "target", "role": "reference", "target": "http://127.0.0.1:9",
                  "resources": {"source": "process"}, "processes": [{"name": "db", "port": 5432}]}],
    "scenarios": [{"name": "s", "path": "/ok"}],
    "loads": [{"concurrency": 10, "requests": 1001, "rate": 30}],
}


@pytest.mark.parametrize(("total", "n", "expected"), [
    (10, 3, [4, 3, 3]), (1000, 2, [500, 500]), (7, 7, [1] * 7), (5, 1, [5]), (11, 4, [3, 3, 3, 2])])
def test_counts_split_evenly_first_shares_take_the_remainder(total: int, n: int, expected: list[int]) -> None:
    shares = [split_count(total, i, n) for i in range(n)]
    assert shares == expected
    assert sum(shares) == total                      # nothing lost or added
    assert max(shares) - min(shares) <= 1


def test_split_count_refuses_a_share_outside_the_generators() -> None:
    with pytest.raises(ValueError):
        split_count(10, 2, 2)


def test_rate_divided_exactly_counts_split_duration_and_loops_kept() -> None:
    load = Load(threads=10, rate=1000.0, loops=7, duration_s=30, max_vus=9, preallocated_vus=7)
    parts = [share_load(load, i, 2) for i in range(2)]
    assert [p.rate for p in parts] == [500.0, 500.0]
    assert [p.threads for p in parts] == [5, 5]
    assert [p.max_vus for p in parts] == [5, 4]
    assert [p.preallocated_vus for p in parts] == [4, 3]
    assert all(p.loops == 7 and p.duration_s == 30 for p in parts)
    thirds = [share_load(Load(rate=1000.0, duration_s=5), i, 3).rate for i in range(3)]
    assert sum(thirds) == pytest.approx(1000.0) and thirds[0] == pytest.approx(1000 / 3)


def test_share_plan_splits_every_load_and_samples_resources_on_the_first_share_only() -> None:
    plan = parse_plan(HEY)
    first, third = share_plan(plan, 0), share_plan(plan, 2)
    assert (first.loads[0].concurrency, first.loads[0].requests) == (4, 334)
    assert (third.loads[0].concurrency, third.loads[0].requests) == (3, 333)
    assert first.loads[0].rate == pytest.approx(10.0)
    assert first.variants[0].resources.source == "process" and len(first.variants[0].processes) == 1
    assert third.variants[0].resources.source == "none" and third.variants[0].processes == ()
    # every share keeps the whole plan's steps, so position k of each share is the same step
    from benchtrail_runner.plan import steps
    assert [s.name.split(" / ")[1:] for s in steps(first)] == [s.name.split(" / ")[1:] for s in steps(third)]
    assert share_plan(parse_plan({**HEY, "generators": 1}), 0) == parse_plan({**HEY, "generators": 1})


def problems(data: dict) -> list[tuple[str, str]]:
    with pytest.raises(PlanError) as info:
        load_plan(json.dumps(data))
    return info.value.problems


def test_plan_validation_of_generators_names_the_field() -> None:
    assert load_plan(json.dumps(HEY)).generators == 3
    assert load_plan(json.dumps({k: v for k, v in HEY.items() if k != "generators"})).generators == 1
    found = problems({**HEY, "loads": [{"concurrency": 2, "requests": 100}]})
    assert found == [("loads[0].concurrency", "2 cannot be split over 3 generators (each share needs at least 1)")]
    found = problems({**HEY, "loads": [{"concurrency": 10, "requests": 90, "rate": 10}]})
    assert [f for f, _ in found] == ["loads[0].rate"]          # share 1: 10/3 req/s over 4 workers
    assert problems({**HEY, "generators": 0})[0][0] == "generators"
    assert problems({**HEY, "generators": "two"})[0][0] == "generators"

"""A plan's `profile`: what is refused, with the field and why."""

from __future__ import annotations

import pytest

from benchtrail.plans.model import PlanError, parse_plan_data


def _plan(profile: dict, **extra: object) -> dict:
    return {"version": 1, "name": "p", "tool": "hey", "variants": [
        {"name": "a", "role": "reference", "target": "http://127.0.0.1:18080", "profile": profile}],
        "scenarios": [{"name": "ok", "path": "/ok"}], "loads": [{"concurrency": 2, "duration_s": 2}], **extra}


def test_a_valid_profile_is_kept():
    plan = parse_plan_data(_plan({"runtime": "jvm", "profiler": "async-profiler", "agent_packages": ["x.y"]}))
    assert plan.variants[0].profile.profiler == "async-profiler"
    assert plan.variants[0].profile.covers(2)


@pytest.mark.parametrize("profile, extra, field, why", [
    ({"runtime": "go", "port": 18080}, {}, "variants[0].profile.port", "pprof URL"),
    ({"runtime": "jvm", "url": "http://127.0.0.1:1/x"}, {}, "variants[0].profile.url", "local process"),
    ({"runtime": "go", "profiler": "jfr"}, {}, "variants[0].profile.profiler", "runtime jvm"),
    ({"runtime": "jvm", "pid": 4, "port": 5}, {}, "variants[0].profile", "one of pid, command or port"),
    ({"runtime": "jvm", "repetitions": "odd"}, {"repetitions": 1}, "variants[0].profile.repetitions", "2 or more"),
    ({"runtime": "jvm"}, {"generators": 2}, "variants[0].profile", "generators 1"),
    ({"runtime": "ruby"}, {}, "variants[0].profile.runtime", ""),
])
def test_bad_profiles_are_refused_naming_the_field(profile, extra, field, why):
    with pytest.raises(PlanError) as exc:
        parse_plan_data(_plan(profile, **extra))
    assert any(path == field and why in reason for path, reason in exc.value.problems), exc.value.problems


def test_odd_profiles_every_other_repetition():
    plan = parse_plan_data(_plan({"runtime": "go", "repetitions": "odd"}, repetitions=4))
    assert [plan.variants[0].profile.covers(r) for r in (1, 2, 3, 4)] == [True, False, True, False]


def test_a_profile_url_is_held_to_the_target_allow_list():
    from benchtrail.targets import plan_problems

    body = _plan({"runtime": "go", "url": "http://10.1.2.3:6060/debug/pprof/profile"})
    problems = plan_problems(body, ["127.0.0.1:*"], [])
    assert [(f, "allow-list" in why) for f, why in problems] == [("variants[0].profile.url", True)]
    remote = _plan({"runtime": "jvm", "port": 8080})
    remote["variants"][0]["target"] = "http://10.1.2.3:8080"
    assert [f for f, _ in plan_problems(remote, ["*"], [])] == ["variants[0].profile"]
    assert plan_problems(_plan({"runtime": "jvm", "port": 18080}), ["127.0.0.1:*"], []) == []

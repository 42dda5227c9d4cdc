"""The runner's own settings and env file, and the plan checks the API keeps after the models moved
into the runner package."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchtrail.plans.model import PlanError, load_plan
from benchtrail_runner.cli import read_env_file
from benchtrail_runner.config import settings_from
from benchtrail_runner.plan import parse_plan

PLAN = """version: 1
name: {name}
tool: hey
variants: [{{name: a, target: "http://127.0.0.1:18080"}}]
scenarios: [{{name: ok, path: /ok}}]
loads: [{{concurrency: 2, requests: 10}}]
"""


def test_env_file_values_and_errors_name_the_line(tmp_path: Path) -> None:
    f = tmp_path / "runner.env"
    f.write_text("# comment\n\nBENCHTRAIL_API_URL=http://api:8400\nexport BENCHTRAIL_RUNNER_TOKEN='bt_x y'\n")
    assert read_env_file(f) == {"BENCHTRAIL_API_URL": "http://api:8400", "BENCHTRAIL_RUNNER_TOKEN": "bt_x y"}
    f.write_text("BENCHTRAIL_API_URL=http://api:8400\nnot a setting\n")
    with pytest.raises(SystemExit, match=r"runner.env line 2: expected KEY=VALUE"):
        read_env_file(f)


def test_settings_problems_name_the_variable_never_the_secret() -> None:
    s = settings_from({"BENCHTRAIL_API_URL": "api:8400", "BENCHTRAIL_BROKER_URL": "amqp://u:hunter2@h/",
                       "BENCHTRAIL_RUNNER_POOLS": "lab,Bad Pool"})
    text = "\n".join(s.problems())
    assert "BENCHTRAIL_API_URL must be an http(s) URL" in text
    assert "BENCHTRAIL_BROKER_URL must be a redis://" in text and "hunter2" not in text
    assert "BENCHTRAIL_RUNNER_TOKEN is not set" in text and "pool 'Bad Pool'" in text
    ok = settings_from({"BENCHTRAIL_REDIS_URL": "redis://:pw@h:6379/0", "BENCHTRAIL_RUNNER_TOKEN": "t"})
    assert ok.problems() == [] and ok.broker_url == "redis://:pw@h:6379/0" and ok.queues == ["runner.default"]


def test_api_still_refuses_unstorable_text_in_a_plan() -> None:
    with pytest.raises(PlanError) as exc:
        load_plan(PLAN.format(name='"bad\\u0000name"'))
    assert exc.value.problems == [("name", "contains a NUL byte at character 3")]


def test_runner_rebuilds_a_validated_body_and_names_unknown_fields() -> None:
    import yaml

    body = yaml.safe_load(PLAN.format(name="fine"))
    plan = parse_plan(body)
    assert plan == load_plan(PLAN.format(name="fine"))
    with pytest.raises(PlanError, match=r"loads\.0\.burst"):
        parse_plan({**body, "loads": [{"concurrency": 2, "requests": 10, "burst": 3}]})

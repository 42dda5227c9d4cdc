"""The OpenAPI document tells the truth: schemathesis drives a real API (PostgreSQL, Redis, a Celery
worker) from the committed document (frontend/src/api/openapi.json, which test_generated_frontend_files
keeps equal to what the server serves) and checks every answer against it.

Checks: not_a_server_error, status_code_conformance, content_type_conformance,
response_schema_conformance, positive_data_acceptance. Left out: starting a plan run and schedule
writes (they start load). positive_data_acceptance is not applied where validity depends on what no
JSON Schema can say: the content of result files and their metadata (upload, a history import, runner results, a
resumable results upload's metadata), a plan's YAML text, and a differential profile's two variants (the same
one twice is refused); the other checks still apply there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import FailureGroup, as_reported_failure
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.pytest._test_builder import build_operation_test
from schemathesis.python._constants.orchestrator import make_constants_value_source
from schemathesis.specs.openapi.checks import (content_type_conformance, positive_data_acceptance,
                                               response_schema_conformance, status_code_conformance)

from infra.localstack import REPO, VENV_BIN, Process, answers, free_port, wait_until
from tests.support.jtl import write_jtl

SPEC = REPO / "frontend" / "src" / "api" / "openapi.json"
EXAMPLES = int(os.environ.get("BENCHTRAIL_CONTRACT_EXAMPLES", "15"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          positive_data_acceptance]
# Where a valid request is more than the document can describe (file contents, plan YAML).
OPAQUE_BODIES = {("POST", "/api/v1/projects/{slug}/runs"), ("POST", "/api/v1/runs/{slug}/results"),
                 ("POST", "/api/v1/runs/{slug}/results/uploads"), ("POST", "/api/v1/projects/{slug}/plans"),
                 ("POST", "/api/v1/projects/{slug}/imports"),
                 # a variant against itself (reference = variant, no base run): two parameters no schema can tie
                 ("GET", "/api/v1/runs/{slug}/profiles/diff")}

CONFIG = SchemathesisConfig.from_dict({
    # A NUL is refused (400 naming the field: PostgreSQL cannot store it), so valid data has none.
    "generation": {"mode": "all", "max-examples": EXAMPLES, "deterministic": True, "allow-x00": False},
    "phases": {"examples": {"enabled": True}, "coverage": {"enabled": True}, "fuzzing": {"enabled": True},
               "stateful": {"enabled": False}},
    "request-timeout": 20,
})
schema = (schemathesis.openapi.from_path(SPEC, config=CONFIG)
          .exclude(path_regex=r"^/api/v1/projects/\{slug\}/plans/\{name\}/runs$", method="POST")
          .exclude(path_regex=r"^/api/v1/projects/\{slug\}/schedules", method=["POST", "PATCH"]))

# What the seeded data makes real, so reads are exercised on something that exists (filled by `seeded`).
KNOWN: dict[str, Any] = {}


@schema.hook("before_generate_path_parameters")
def mostly_real_resources(context, strategy):  # type: ignore[no-untyped-def]
    """Half of the generated path parameters name the seeded project, run, trail, file or webhook."""
    path = context.operation.path
    real: dict[str, Any] = {}
    if path.startswith("/api/v1/projects/{slug}"):
        real["slug"] = KNOWN["project"]
    if path.startswith("/api/v1/runs/{slug}"):
        real["slug"] = KNOWN["run"]
    for name in ("trail_id", "file_id", "webhook_id"):
        if "{" + name + "}" in path:
            real[name] = KNOWN[name]
    if not real:
        return strategy

    def merge(params):  # type: ignore[no-untyped-def]
        if isinstance(params, dict):
            return {**params, **real}
        if getattr(params, "meta", True) is None:  # a generated value that is not a mutation (negative data)
            return params.map_value(lambda p: {**p, **real})
        return params

    return st.one_of(strategy, strategy.map(merge))


@pytest.fixture(scope="module")
def contract_api(infra: dict[str, str], worker, logdir: Path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """An API of its own: webhooks may go anywhere (the allow-list is site configuration that no
    document can state), everything else as configured for every test."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")},
           "BENCHTRAIL_PUBLIC_URL": url, "BENCHTRAIL_WEBHOOK_ALLOWLIST": "*"}
    proc = Process("api-contract", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory",
                                    "--host", "127.0.0.1", "--port", str(port)], env, logdir)
    wait_until(lambda: answers(f"{url}/api/health", timeout=1), 120, "the API")
    yield url
    proc.stop()


@pytest.fixture(scope="module")
def seeded(contract_api: str, admin_token: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A project with a completed run (cells, trails, a raw file), an annotation and a webhook."""
    auth = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=contract_api, headers=auth, timeout=30) as c:
        served = c.get("/api/openapi.json").json()
        assert served == json.loads(SPEC.read_text()), "the committed document is stale: run `make openapi`"
        r = c.post("/api/v1/projects", json={"slug": "contract", "name": "Contract", "is_public": True})
        assert r.status_code == 201, r.text
        jtl = write_jtl(tmp_path_factory.mktemp("contract") / "baseline.jtl", seed=7, per_group=40)
        r = c.post("/api/v1/projects/contract/runs",
                   data={"metadata": json.dumps({"agent_version": "1.0.0", "labels": {"ci": "contract"},
                                                 "files": [{"variant": "baseline"}]})},
                   files=[("files", (jtl.name, jtl.read_bytes()))])
        assert r.status_code == 202, r.text
        run = r.json()["run"]
        detail = wait_until(lambda: (d := c.get(f"/api/v1/runs/{run}").json())["status"] in ("completed", "failed")
                            and d, 120, "the seeded run to be ingested")
        assert detail["status"] == "completed", detail["status_detail"]
        trails = c.get("/api/v1/projects/contract/trails").json()["items"]
        assert trails
        r = c.post("/api/v1/projects/contract/annotations", json={"title": "1.0.0 released", "agent_version": "1.0.0"})
        assert r.status_code == 201, r.text
        r = c.post("/api/v1/projects/contract/webhooks", json={"url": "http://127.0.0.1:9/hook"})
        assert r.status_code == 201, r.text
        KNOWN.update(project="contract", run=run, trail_id=trails[0]["id"], file_id=detail["files"][0]["id"],
                     webhook_id=r.json()["id"])
    return {"url": contract_api, "auth": auth}


def _operation_test(operation: Any, check: Any) -> Any:
    """The Hypothesis test of one operation, as schemathesis's pytest plugin builds it (`schema.parametrize()`): its
    examples, coverage and fuzzing phases. Built when the test runs, not when it is collected: the coverage phase
    computes its cases as it builds the test (4 CPU-seconds for the document), which every test process would do
    at collection, though only the process that runs these tests needs them."""
    return build_operation_test(config=schema.config, operation=operation, test_func=check, given_kwargs={},
                                feedback=FeedbackSources(constants_value_source=make_constants_value_source(schema)))


OPERATIONS = {result.ok().label: result.ok() for result in schema.get_all_operations()}


@pytest.mark.parametrize("label", list(OPERATIONS))
def test_api_answers_as_documented(label: str, seeded: dict[str, Any]) -> None:
    operation = OPERATIONS[label]
    checks = CHECKS
    if (operation.method.upper(), operation.path) in OPAQUE_BODIES:
        checks = [c for c in CHECKS if c is not positive_data_acceptance]

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    def check(case):  # type: ignore[no-untyped-def]
        case.call_and_validate(base_url=seeded["url"], headers=seeded["auth"], checks=checks)

    try:
        _operation_test(operation, check)()
    except FailureGroup as exc:   # each failure with its case and the curl command that repeats it, as the plugin does
        raise as_reported_failure(exc) from None

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from benchtrail.plans.model import load_plan, steps
from benchtrail_runner.process import ToolError
from benchtrail_runner.tools import run_step

from tests.support.runner import Target, free_port, ingest_checks, require_tool


def hey_plan(url: str, load: str, scenarios: str = "  - {name: ok, path: /ok}") -> str:
    return f"""
version: 1
name: hey test
tool: hey
variants:
  - {{name: a, role: reference, target: "{url}"}}
scenarios:
{scenarios}
loads:
  - {load}
"""


def test_hey_rows_equal_requests(target: Target, tmp_path: Path) -> None:
    require_tool("hey")
    plan = load_plan(hey_plan(target.url, "{concurrency: 10, requests: 700}",
                              "  - {name: ok, path: /ok}\n  - {name: user, path: /users/ann/7}"))
    seen = []
    run = run_step(plan, steps(plan)[0], tmp_path, progress=seen.append)
    assert [o.scenario for o in run.outputs] == ["ok", "user"]
    for o in run.outputs:
        with open(o.path, newline="") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == 700
        assert {r["status-code"] for r in rows} == {"200"}
        assert o.summary.count == 700 and o.summary.errors == 0
    assert seen[-1].percent == 100.0 and seen[-1].requests == 1400


@pytest.mark.timing
def test_hey_rate_cap_is_checked(target: Target, tmp_path: Path) -> None:
    require_tool("hey")
    plan = load_plan(hey_plan(target.url, "{concurrency: 2, rate: 200, duration_s: 2}"))
    run = run_step(plan, steps(plan)[0], tmp_path)
    with open(run.outputs[0].path, newline="") as f:
        offsets = np.array([float(r["offset"]) for r in csv.DictReader(f)])
    starts_ms = np.round(offsets * 1000)  # ingest keeps start times in whole ms
    independent = (starts_ms.size - 1) / ((starts_ms.max() - starts_ms.min()) / 1000)
    checks = ingest_checks(plan, run)
    rate = checks["rate a/ok"]
    assert f"achieved {independent:.1f} req/s vs requested 200" in rate.detail
    assert rate.ok == (abs(independent - 200) / 200 <= 0.01)
    assert checks["errors a/ok"].ok and "0 of " in checks["errors a/ok"].detail


def test_hey_total_failure_is_an_error(tmp_path: Path) -> None:
    require_tool("hey")
    dead = f"http://127.0.0.1:{free_port()}"
    plan = load_plan(hey_plan(dead, "{concurrency: 2, requests: 20}"))
    with pytest.raises(ToolError, match="every hey request failed"):
        run_step(plan, steps(plan)[0], tmp_path)

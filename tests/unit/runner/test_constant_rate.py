from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from benchtrail.plans.model import load_plan, steps
from benchtrail_runner.tools import run_step

from tests.support.runner import Target, ingest_checks, require_tool

RATE = 1000.0
DURATION_S = 5.0


def _epoch(text: str) -> float:
    # independent of the runner's parser: keep microseconds of the RFC 3339 nanosecond stamp
    date, frac = text.rstrip("Z").split(".")
    return datetime.fromisoformat(f"{date}.{frac[:6]}+00:00").timestamp()


@pytest.mark.timing
def test_constant_rate_1000_qps_within_one_percent(target: Target, tmp_path: Path) -> None:
    require_tool("k6")
    plan = load_plan(f"""
version: 1
name: constant rate
tool: constant-rate
variants: [{{name: a, target: "{target.url}"}}]
scenarios: [{{name: ok, path: /ok}}]
loads: [{{rate: {RATE:g}, duration_s: {DURATION_S:g}}}]
""")
    run = run_step(plan, steps(plan)[0], tmp_path)
    ends, durations = [], []
    with open(run.outputs[0].path) as f:
        for line in f:
            d = json.loads(line)
            if d.get("type") == "Point" and d["metric"] == "http_req_duration":
                ends.append(_epoch(d["data"]["time"]))
                durations.append(d["data"]["value"] / 1000.0)
    starts = sorted(e - d for e, d in zip(ends, durations, strict=False))
    arrival = (len(starts) - 1) / (starts[-1] - starts[0])
    per_duration = len(starts) / DURATION_S
    print(f"constant-rate: {len(starts)} requests, arrival rate {arrival:.2f} req/s, "
          f"count/duration {per_duration:.2f} req/s (target {RATE:g})")
    assert abs(arrival - RATE) / RATE <= 0.01
    assert abs(per_duration - RATE) / RATE <= 0.01
    checks = ingest_checks(plan, run)
    assert checks["rate a"].ok, checks["rate a"].detail
    # ingest reads k6 times to the millisecond: the same arrival rate within 0.1 %
    judged = float(re.search(r"achieved ([\d.]+) req/s", checks["rate a"].detail).group(1))
    assert judged == pytest.approx(arrival, rel=1e-3)

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest
from benchtrail.plans.model import load_plan, steps
from benchtrail_runner.process import ToolError
from benchtrail_runner.tools import run_step

from tests.support.runner import Target, require_tool


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _plan(tool: str, url: str, load: str) -> str:
    return f"""
version: 1
name: cancel
tool: {tool}
variants: [{{name: a, target: "{url}"}}, {{name: b, target: "{url}"}}]
scenarios: [{{name: slow, path: /slow}}]
loads: [{load}]
order: simultaneous
repetitions: 1
"""


@pytest.mark.parametrize(("tool", "load", "binary"), [
    ("hey", "{concurrency: 4, duration_s: 60}", "hey"),
    ("constant-rate", "{rate: 100, duration_s: 60}", "k6"),
])
def test_cancel_stops_process_groups(target: Target, tmp_path: Path, tool: str, load: str, binary: str) -> None:
    require_tool(binary)
    plan = load_plan(_plan(tool, target.url, load))
    pids: list[int] = []
    started = time.monotonic()
    cancel_at = started + 1.5
    with pytest.raises(ToolError) as info:
        run_step(plan, steps(plan)[0], tmp_path, cancel=lambda: time.monotonic() > cancel_at,
                 on_start=pids.extend)
    stopped_after = time.monotonic() - cancel_at
    assert info.value.cancelled
    assert len(pids) == 2
    assert stopped_after < 5.0
    assert not any(_alive(p) for p in pids)


def test_timeout_stops_the_tool(target: Target, tmp_path: Path) -> None:
    require_tool("hey")
    plan = load_plan(_plan("hey", target.url, "{concurrency: 2, duration_s: 60}"))
    pids: list[int] = []
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out after 1 s") as info:
        run_step(plan, steps(plan)[0], tmp_path, timeout_s=1.0, on_start=pids.extend)
    assert info.value.timed_out
    assert time.monotonic() - started < 6.0
    assert not any(_alive(p) for p in pids)

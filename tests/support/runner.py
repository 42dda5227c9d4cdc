"""Helpers of the runner tests: the real tools (a missing one fails the test with the command that installs
it, never a silent skip), a started target, and readings of a process taken straight from /proc."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import pytest
from benchtrail_runner.process import group_priority
from benchtrail_runner.tools import ToolNotInstalled, tool_path

from infra.localstack import free_port

__all__ = ["Target", "free_port", "ingest_checks", "proc_cpu_s", "proc_rss_mb", "renice", "require_tool", "wait_http"]


def require_tool(name: str) -> str:
    try:
        return tool_path(name)
    except ToolNotInstalled as exc:
        pytest.fail(f"{exc} (the runner tests need the real tools)")


def wait_http(url: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Target:
    def __init__(self, proc: subprocess.Popen[bytes], port: int) -> None:
        self.proc = proc
        self.port = port
        self.url = f"http://127.0.0.1:{port}"


def proc_cpu_s(pid: int) -> float:
    """utime + stime of a process straight from /proc, independent of psutil."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def renice(pids: Iterable[int], nice: int) -> dict[int, int]:
    """Sets the nice value of each process (lowering it takes root: the harness's priority for a timing test, never the
    product's), and of its session's scheduling group when it leads a session of its own (where the kernel groups
    sessions, nice alone orders only the processes of one session: benchtrail_runner.process.group_priority);
    returns the nice values they had. A process that is gone, or one this user may not change, is left."""
    before = {}
    for pid in pids:
        try:
            was = os.getpriority(os.PRIO_PROCESS, pid)
            os.setpriority(os.PRIO_PROCESS, pid, nice)
        except (ProcessLookupError, PermissionError):
            continue
        before[pid] = was
        group_priority(pid, nice)
    return before


def proc_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise AssertionError("no VmRSS")


def ingest_checks(plan, run) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """What ingest judges of a step's raw outputs (the runner judges nothing): check name -> Finding."""
    from benchtrail.ingest.detect import parse_file
    from benchtrail.ingest.model import ParseOptions
    from benchtrail.ingest.service import measured_file
    from benchtrail.ingest.validity import file_checks

    rates = {load.spec.key: float(load.rate) for load in plan.loads if load.rate}
    found: dict[str, object] = {}
    for o in run.outputs:
        parsed = parse_file(o.path, format=o.format, options=ParseOptions(load=run.step.load.spec, scenario=o.scenario))
        for facts, key in measured_file(parsed, variant=o.variant, scenario=o.scenario, fmt=o.format).facts:
            found |= {f.check: f for f in file_checks(facts, rates.get(key))}
    return found

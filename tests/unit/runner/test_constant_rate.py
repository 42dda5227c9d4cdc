from __future__ import annotations

import json
import os
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest

from benchtrail.plans.model import load_plan, steps
from benchtrail_runner.tools import _k6_script, _NdjsonTail, run_step

from infra.localstack import wait_until
from tests.support.runner import Target, ingest_checks, renice, require_tool

RATE = 1000.0
DURATION_S = 5.0
STALL_REQUESTS = 150  # the target stops answering mid-run until this many requests wait on it
STALL_S = STALL_REQUESTS / RATE   # the longest wait of them, about
PREALLOCATED = 300    # virtual users for 0.3 s of arrivals (the default, 100, drops about 30 in that stall)


def _epoch(text: str) -> float:
    # independent of the runner's parser: keep microseconds of the RFC 3339 nanosecond stamp
    date, frac = text.rstrip("Z").split(".")
    return datetime.fromisoformat(f"{date}.{frac[:6]}+00:00").timestamp()


@contextmanager
def _foreground(*pids: int) -> Iterator[None]:
    """The target and this process (k6, its child, inherits it, in a session of its own at the same priority) ahead
    of the other test processes on the shared cores, as root: a stall of theirs beyond the test's own would drop
    arrivals (it did, in CI)."""
    before = renice(pids, -20) if os.geteuid() == 0 else {}
    try:
        yield
    finally:
        for pid, nice in before.items():
            renice([pid], nice)


def _waiting_requests(port: int) -> int:
    """Connections to the local `port` with bytes the server has not read: one request each (HTTP/1.1, no
    pipelining), read from the kernel's table (the rx_queue of the server's end)."""
    waiting = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port, rx_queue = int(fields[1].split(":")[1], 16), int(fields[4].split(":")[1], 16)
        waiting += local_port == port and rx_queue > 0
    return waiting


def _stall(target: Target, workdir: Path) -> tuple[threading.Thread, list[BaseException]]:
    """Once k6 has answered 2,000 requests, stops the target until STALL_REQUESTS wait on it, then lets it go."""
    errors: list[BaseException] = []

    def load_under_way(tail: list[_NdjsonTail]) -> bool:
        if not tail:
            tail += [_NdjsonTail(path) for path in workdir.glob("*.k6.ndjson")]
        for t in tail:
            t.poll()
        return bool(tail) and tail[0].requests >= 2000

    def stop_and_continue() -> None:
        try:
            tail: list[_NdjsonTail] = []
            wait_until(lambda: load_under_way(tail), 60, "k6's first 2,000 requests", interval=0.01)
            os.kill(target.proc.pid, signal.SIGSTOP)
            try:
                wait_until(lambda: _waiting_requests(target.port) >= STALL_REQUESTS, 10,
                           f"{STALL_REQUESTS} requests waiting on the stopped target", interval=0.002)
            finally:
                os.kill(target.proc.pid, signal.SIGCONT)
        except BaseException as exc:  # noqa: BLE001 - the test raises it after the run
            errors.append(exc)

    thread = threading.Thread(target=stop_and_continue, daemon=True)
    thread.start()
    return thread, errors


@pytest.mark.timing
def test_constant_rate_1000_qps_within_one_percent_through_a_stall(target: Target, tmp_path: Path) -> None:
    """An open model keeps its arrivals while the target stalls: none dropped, the rate held."""
    require_tool("k6")
    plan = load_plan(f"""
version: 1
name: constant rate
tool: constant-rate
variants: [{{name: a, target: "{target.url}"}}]
scenarios: [{{name: ok, path: /ok}}]
loads: [{{rate: {RATE:g}, duration_s: {DURATION_S:g}, preallocated_vus: {PREALLOCATED}}}]
""")
    with _foreground(target.proc.pid, os.getpid()):
        stall, stall_errors = _stall(target, tmp_path)
        run = run_step(plan, steps(plan)[0], tmp_path)
        stall.join()
    assert not stall_errors, stall_errors
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
          f"count/duration {per_duration:.2f} req/s (target {RATE:g}), slowest {max(durations) * 1000:.0f} ms")
    assert max(durations) >= STALL_S * 0.9, "the stall fell outside the load"
    assert abs(arrival - RATE) / RATE <= 0.01
    assert abs(per_duration - RATE) / RATE <= 0.01
    checks = ingest_checks(plan, run)
    assert checks["rate a"].ok, checks["rate a"].detail
    assert "dropped a" not in checks, checks["dropped a"].detail
    # ingest reads k6 times to the millisecond: the same arrival rate within 0.1 %
    judged = float(re.search(r"achieved ([\d.]+) req/s", checks["rate a"].detail).group(1))
    assert judged == pytest.approx(arrival, rel=1e-3)


def test_k6_virtual_users_follow_the_plan() -> None:
    plan = load_plan("""
version: 1
name: vus
tool: constant-rate
variants: [{name: a, target: "http://127.0.0.1:9"}]
scenarios: [{name: ok, path: /ok}]
loads:
  - {rate: 1000, duration_s: 5}
  - {rate: 1000, duration_s: 5, max_vus: 50}
  - {rate: 1000, duration_s: 5, preallocated_vus: 300}
  - {rate: 1000, duration_s: 5, preallocated_vus: 300, max_vus: 300}
  - {rate: 4, duration_s: 5}
repetitions: 1
""")
    found = []
    for step in steps(plan):
        script = _k6_script(plan.variant("a"), list(plan.scenarios), step.load)
        options = json.loads(script.split("export const options = ", 1)[1].split(";\n", 1)[0])
        found.append({(s["preAllocatedVUs"], s["maxVUs"]) for s in options["scenarios"].values()})
    # a tenth of a second of arrivals ready, up to 4 times that (at least 100); the plan's numbers win
    assert found == [{(100, 400)}, {(50, 50)}, {(300, 1200)}, {(300, 300)}, {(10, 100)}]

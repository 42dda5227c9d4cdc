"""A plan over two load generators: two runners of one pool each claim a share, start together, and
the run's cells are those of the union of both shares' raw outputs (numpy); a share whose runner dies
fails the run, naming the share."""

from __future__ import annotations

import csv
import io
import math
import os
import signal
import socket
import time
from fractions import Fraction

import numpy as np
import pytest

from infra.localstack import wait_until
from tests.support.api import post_plan, run_of, start, tool_processes, wait_status
from tests.support.outputs import plain

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # two runners start on a loaded machine


def nearest_rank(values: np.ndarray, p: float) -> float:
    ordered = np.sort(values)
    return float(ordered[max(math.ceil(Fraction(str(p)) * len(ordered) / 100), 1) - 1])


def hey_rows(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Independent reading of a hey CSV: start (ms since hey started), latency (µs), success."""
    rows = list(csv.DictReader(io.StringIO(raw.decode())))
    start = np.array([round(float(r["offset"]) * 1000) for r in rows], dtype=np.int64)
    lat = np.array([round(float(r["response-time"]) * 1_000_000) for r in rows], dtype=np.int64)
    ok = np.array([int(r["status-code"]) < 400 for r in rows])
    return start, lat, ok


def plan(name: str, pool: str, target: str, path: str, repetitions: int = 1, **load) -> dict:
    return {"version": 1, "name": name, "tool": "hey", "pool": pool, "generators": 2,
            "variants": [{"name": "target", "role": "reference", "target": target}],
            "scenarios": [{"name": "s", "path": path}], "loads": [load], "repetitions": repetitions}


def test_two_generators_merge_into_the_union_of_both_outputs(client, make_project, start_runner, worker, go_target):
    slug, token = make_project(role="admin")
    start_runner("pool-gens", "gen-a")
    start_runner("pool-gens", "gen-b")
    # two repetitions: two steps, each run by both shares at once (the second after its own barrier)
    post_plan(client, slug, token, plan("two-gens", "pool-gens", go_target, "/ok", repetitions=2,
                                        concurrency=4, requests=400))
    run_slug = start(client, slug, token, "two-gens")
    run = wait_status(client, run_slug, ("completed", "failed", "cancelled"), 180)
    assert run["status"] == "completed", run["status_detail"]

    # one share per runner, each on this host, both delivered; both started at one common instant
    shares = run["shares"]
    assert [s["index"] for s in shares] == [0, 1]
    assert {s["runner"] for s in shares} == {"gen-a", "gen-b"}
    assert {s["host"] for s in shares} == {socket.gethostname()}
    assert all(s["status"] == "delivered" for s in shares)
    assert run["meta"]["generators"] == 2 and run["meta"]["start_at"]
    assert sum("starting at the common instant" in line for line in run["progress"]["log"]) == 2

    outputs = [f for f in run["files"] if f["format"] == "hey-csv"]
    assert sorted(f["share"] for f in outputs) == [0, 0, 1, 1]
    # each share's files are numbered in its step order ("000-…", "001-…"): step k of both shares ran together
    by_step: dict[str, list] = {}
    for f in outputs:
        by_step.setdefault(f["filename"][:3], []).append(hey_rows(plain(client.get(f["download_url"]).content)))
    assert sorted(by_step) == ["000", "001"] and all(len(v) == 2 for v in by_step.values())
    parts = [p for step in by_step.values() for p in step]
    assert [p[1].size for p in parts] == [200] * 4            # 400 requests per step, 200 per share
    lat = np.concatenate([p[1] for p in parts])
    ok = np.concatenate([p[2] for p in parts])
    # a repetition's window is its union's (first start to last end over both shares); the cell's
    # duration is the repetitions' windows added up
    windows = []
    for step in by_step.values():
        start_ms = np.concatenate([p[0] for p in step])
        end_ms = np.concatenate([p[0] + p[1] / 1000 for p in step])
        windows.append((end_ms.max() - start_ms.min()) / 1000)

    scenario = next(s["id"] for s in run["scenarios"] if s["name"] == "s")
    assert [(ld["kind"], ld["value"], ld["requests"]) for ld in run["loads"]] == [("concurrency", 4, 400)]
    for cell in run["cells"]:  # the scenario's cell and the all-scenarios cell: the same samples
        assert cell["count"] == lat.size == 800 and cell["errors"] == int((~ok).sum())
        assert cell["latency_min"] == pytest.approx(lat.min() / 1000, rel=1e-12)
        assert cell["latency_max"] == pytest.approx(lat.max() / 1000, rel=1e-12)
        assert cell["latency_mean"] == pytest.approx(lat.mean() / 1000, rel=1e-9)
        assert cell["duration_s"] == pytest.approx(sum(windows), rel=1e-9)
        assert cell["throughput"] == pytest.approx(lat.size / sum(windows), rel=1e-9)
        for name, p in (("p50", 50), ("p75", 75), ("p90", 90), ("p95", 95), ("p99", 99)):
            exact = nearest_rank(lat, p) / 1000
            assert abs(cell[f"latency_{name}"] - exact) <= exact * 0.001, (name, cell[f"latency_{name}"], exact)
    assert {c["scenario_id"] for c in run["cells"]} >= {scenario}
    # validity is judged per share: each share's file is checked against its own 200 requests
    errors = [v for v in run["validity"] if v["check"].startswith("errors ")]
    assert sorted(v["check"] for v in errors) == ["errors target/s (share 1)"] * 2 + ["errors target/s (share 2)"] * 2
    assert all(v["ok"] and "of 200 failed" in v["detail"] for v in errors), errors


def test_a_share_whose_runner_dies_fails_the_run(client, make_project, start_runner, worker, beat, go_target):
    slug, token = make_project(role="admin")
    runners = {name: start_runner("pool-gens-kill", name) for name in ("gen-kill-a", "gen-kill-b")}
    post_plan(client, slug, token, plan("gens-long", "pool-gens-kill", go_target, "/slow", concurrency=2,
                                        duration_s=60))
    run_slug = start(client, slug, token, "gens-long")
    run = wait_until(lambda: (r := run_of(client, run_slug))["shares"] and
                     all(s["status"] == "running" for s in r["shares"]) and r, 60, "both shares to be claimed")
    port = go_target.rsplit(":", 1)[1]
    wait_until(lambda: len(tool_processes(f":{port}/slow")) == 2, 30, "both shares' hey to start")
    victim = run["shares"][1]
    os.killpg(runners[victim["runner"]].proc.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    run = wait_status(client, run_slug, ("failed",), 30)
    assert time.monotonic() - killed_at < 5 + 2 + 5  # heartbeat timeout + sweeper interval + slack
    reason = run["status_detail"]["reason"]
    assert f"share 2 of 2 (runner '{victim['runner']}'" in reason and "stopped reporting" in reason, reason
    assert "share 1 of 2" not in reason
    states = {s["index"]: s["status"] for s in run["shares"]}
    assert states == {0: "cancelled", 1: "failed"}
    # the surviving share's runner is told to stop by its next heartbeat and stops its tool
    wait_until(lambda: not tool_processes(f":{port}/slow"), 15, "the surviving share's hey to stop")
    assert run_of(client, run_slug)["cells"] == []

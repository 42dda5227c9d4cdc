"""A user's own JMX (hand-written, JMeter 5.6.3 format, tests/fixtures/user-shop.jmx) run by the runner
against the Go demo target through the API; every cell checked against the uploaded JTL with numpy.

The run is sized by loops, not by a duration: a JVM started on a busy machine may spend a short duration's
seconds on its first request (CI once saw 3 s pass with only the first sampler's samples)."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import numpy as np
import pytest

from infra.localstack import REPO
from tests.support.api import auth as admin_headers
from tests.support.api import post_plan, start, wait_status
from tests.support.outputs import plain

pytestmark = pytest.mark.slow

THREADS, LOOPS = 3, 20

JMX = REPO / "tests" / "fixtures" / "user-shop.jmx"


def test_a_hand_written_jmx_runs_end_to_end(client, make_project, runner_pool, worker, go_target):
    slug, token = make_project(role="admin")
    plan = {"version": 1, "name": "shop", "tool": "jmeter", "pool": runner_pool,
            "variants": [{"name": "target", "role": "reference", "target": go_target}],
            "scenarios": [{"name": "shop", "jmx": str(JMX)}],
            "loads": [{"threads": THREADS, "loops": LOOPS}], "repetitions": 1}
    post_plan(client, slug, token, plan)
    run_slug = start(client, slug, token, "shop")
    run = wait_status(client, run_slug, ("completed", "failed", "cancelled"), 240)
    assert run["status"] == "completed", run["status_detail"]

    [jtl] = [f for f in run["files"] if f["format"] == "jmeter-csv"]
    r = client.get(jtl["download_url"], headers=admin_headers(token))
    assert r.status_code == 200, r.text
    samples: dict[str, list[tuple[int, int, bool]]] = defaultdict(list)
    assert jtl["filename"].endswith(".zst")  # runners send their outputs zstd-compressed
    text = plain(r.content).decode()
    for row in csv.DictReader(io.StringIO(text)):
        samples[row["label"]].append((int(row["timeStamp"]), int(row["elapsed"]), row["success"] == "true"))
    assert set(samples) == {"home", "user profile", "add to cart"}
    # each thread's every loop ran each sampler once: the JMX read the loops property
    assert {label: len(rows) for label, rows in samples.items()} == dict.fromkeys(samples, THREADS * LOOPS)

    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    [load] = run["loads"]
    assert (load["kind"], load["value"]) == ("threads", THREADS)
    cells = {scenarios[c["scenario_id"]]: c for c in run["cells"]}
    for label, rows in samples.items():
        ts = np.array([s[0] for s in rows], dtype=np.int64)
        el = np.array([s[1] for s in rows], dtype=np.float64)
        cell = cells[label]
        assert cell["count"] == len(rows) and cell["errors"] == sum(1 for s in rows if not s[2])
        assert cell["latency_mean"] == pytest.approx(el.mean(), rel=1e-9)
        assert cell["latency_min"] == el.min() and cell["latency_max"] == el.max()
        for p in (50, 75, 90, 99):
            # nearest rank, from an HDR histogram of 3 significant digits: within 0.1%
            assert cell[f"latency_p{p}"] == pytest.approx(np.percentile(el, p, method="inverted_cdf"), rel=1e-3)
        assert cell["throughput"] == pytest.approx(len(rows) / ((ts + el).max() - ts.min()) * 1000, rel=1e-9)
    total = sum(len(v) for v in samples.values())
    assert cells["*"]["count"] == total

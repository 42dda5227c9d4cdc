"""Overheads of sample-based cells (JMeter A/B): the A/B result per cell against numpy and scipy on
the raw JTL rows."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from tests.support.api import wait_analysed
from tests.support.api import upload
from tests.support.jtl import thread_group_size, write_jtl


def elapsed_ms(path: Path) -> dict[tuple[str, int], np.ndarray]:
    out: dict[tuple[str, int], list[float]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault((row["label"], thread_group_size(row["threadName"])), []).append(float(row["elapsed"]))
    return {k: np.array(v) for k, v in out.items()}


def test_jmeter_overheads_match_numpy_and_scipy(client, worker, make_project, scratch):
    slug, token = make_project()
    baseline = write_jtl(scratch / "baseline.jtl", seed=21, per_group=300)
    agent = write_jtl(scratch / "agent.jtl", seed=22, slowdown=1.25, per_group=300)
    r = upload(client, slug, token, [("baseline", baseline), ("agent", agent)], {"agent_version": "3.0.0"})
    assert r.status_code == 202, r.text
    run = wait_analysed(client, r.json()["run"])
    items = client.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": "latency_p75"}).json()["items"]
    a, b = elapsed_ms(baseline), elapsed_ms(agent)
    checked = 0
    for item in items:
        if item["cell"]["scenario"] == "*":
            continue
        key = (item["cell"]["scenario"], int(float(item["cell"]["load_label"].split()[0])))
        ref, var = a[key], b[key]
        res = item["result"]
        assert item["variant"] == "agent" and item["reference_variant"] == "baseline"
        # Nearest-rank P75 of the raw samples; the HDR buckets hold them to 0.1%.
        p75 = lambda x: np.sort(x)[int(np.ceil(0.75 * x.size)) - 1]  # noqa: E731
        assert res["reference"] == pytest.approx(p75(ref), rel=1e-3)
        assert res["variant"] == pytest.approx(p75(var), rel=1e-3)
        assert res["ci_low"] < res["abs_diff"] < res["ci_high"]
        # One repetition a side: a block bootstrap over the repetition's time-ordered intervals, never
        # a resampling of requests; no Mann-Whitney p (it would treat requests as independent).
        assert res["method"] == "block-bootstrap-time" and res["worse"] is True
        assert res["mw_p"] is None and res["effective_n"] >= 10 and res["block_length"] >= 1
        assert res["repetitions"]["reference"] == pytest.approx([p75(ref)], rel=1e-3)
        assert res["repetitions"]["variant"] == pytest.approx([p75(var)], rel=1e-3)
        gt = (var[:, None] > ref[None, :]).mean() - (var[:, None] < ref[None, :]).mean()
        assert res["cliffs_delta"] == pytest.approx(gt, abs=0.01)
        checked += 1
    assert checked == 6  # two labels x three thread groups

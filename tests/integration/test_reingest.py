"""`benchtrail admin reingest`: a completed run measured again from its stored files. Cells an older
version got wrong (written over in the database here, as that version would have left them) come back
equal to numpy on the raw files, the overheads come back with the analysis, and a manual exclusion stays.
A stored file whose bytes changed on disk is refused, and the run stays exactly as it was."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from infra.localstack import VENV_BIN
from tests.support.api import wait_analysed
from tests.support.api import upload
from tests.support.jtl import fresh_seed, independent_cells, write_jtl


def reingest(*args: str) -> subprocess.CompletedProcess[str]:
    # FORCE_COLOR (set by many CI systems) must not colour --json output: it is read by programs.
    return subprocess.run([str(VENV_BIN / "benchtrail"), "admin", "reingest", "--json", *args],
                          env={**os.environ, "FORCE_COLOR": "1"}, capture_output=True, text=True, timeout=120)


def measured(run: dict) -> dict:
    """The run's cells by (variant, scenario, load), without their database ids."""
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {ld["id"]: ld["key"] for ld in run["loads"]}
    return {(variants[c["variant_id"]], scenarios[c["scenario_id"]], loads[c["load_id"]]):
            {k: v for k, v in c.items() if k not in ("id", "variant_id", "scenario_id", "load_id", "trail_id")}
            for c in run["cells"]}


def without_ids(overheads: list[dict]) -> list[dict]:
    return [{k: v for k, v in o.items() if k not in ("cell_id", "ref_cell_id")} for o in overheads]


def test_a_run_is_measured_again_from_its_stored_files(client, live_api, worker, make_project, scratch, infra):
    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    # The agent's file is changed on disk at the end: bytes no other test stores (`fresh_seed`), since every
    # project of this test process shares the stored file of the same bytes.
    files = {"baseline": write_jtl(scratch / "baseline.jtl", seed=21),
             "agent": write_jtl(scratch / "agent.jtl", seed=fresh_seed(), slowdown=1.2)}
    r = upload(client, slug, token, list(files.items()), {"agent_version": "3.0.0"})
    assert r.status_code == 202, r.text
    run_slug = r.json()["run"]
    first = wait_analysed(client, run_slug)
    overheads = client.get(f"/api/v1/runs/{run_slug}/overheads").json()["items"]
    assert overheads
    r = client.put(f"/api/v1/runs/{run_slug}/exclusion", json={"reason": "wrong build"}, headers=auth)
    assert r.status_code == 200, r.text
    excluded = wait_analysed(client, run_slug)

    # What an older version would have left: other counts and percentiles, none of today's extras.
    engine = create_engine(infra["BENCHTRAIL_DATABASE_URL"])
    with engine.begin() as conn:
        changed = conn.execute(text(
            "UPDATE cells SET count = count + 7, latency_p75 = latency_p75 * 2, extra = '{}' "
            "WHERE run_id = (SELECT id FROM runs WHERE slug = :s)"), {"s": run_slug}).rowcount
    engine.dispose()
    assert changed == len(first["cells"])
    # A second API process shows them (and keeps the run's measured part in memory, as it does).
    server = httpx.Client(base_url=live_api, timeout=30)
    assert measured(server.get(f"/api/v1/runs/{run_slug}").json()) != measured(first)

    done = reingest(run_slug)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == [{"run": run_slug, "ok": True, "cells_before": len(first["cells"]),
                                        "cells": len(first["cells"]), "is_valid": False}]
    wait_analysed(client, run_slug)
    again = server.get(f"/api/v1/runs/{run_slug}").json()
    assert again["remeasured_at"] is not None and first["remeasured_at"] is None
    assert measured(again) == measured(first)
    for name, path in files.items():
        for (label, threads), want in independent_cells(path).items():
            cell = measured(again)[(name, label, f"threads:{threads}")]
            assert (cell["count"], cell["errors"]) == (want["count"], want["errors"])
            assert cell["latency_p75"] == pytest.approx(want["latency_p75"], rel=1e-3)
            assert cell["latency_mean"] == pytest.approx(want["latency_mean"], rel=1e-12)
    # The analysis ran again: the overheads are back, equal; the exclusion stayed.
    assert without_ids(client.get(f"/api/v1/runs/{run_slug}/overheads").json()["items"]) == without_ids(overheads)
    assert again["validity"] == excluded["validity"] and again["is_valid"] is False

    # A stored file changed on disk: refused, naming it; the run keeps what it had.
    blob = next((Path(infra["BENCHTRAIL_DATA_DIR"]) / "blobs").rglob(first["files"][1]["sha256"]))
    blob.chmod(0o644)
    with blob.open("ab") as f:
        f.write(b"1700000000000,5,x,200,OK,TG 10 1-1,text,true,,512,120,10,10,http://h/,4,0,0\n")
    done = reingest("--project", slug)   # every completed run of the project: this one
    assert done.returncode == 4, done.stdout + done.stderr
    [result] = json.loads(done.stdout)
    assert (result["run"], result["ok"], result["file"]) == (run_slug, False, "agent.jtl")
    assert "sha256 differs" in result["reason"], result
    assert measured(server.get(f"/api/v1/runs/{run_slug}").json()) == measured(first)
    assert server.get(f"/api/v1/runs/{run_slug}").json()["remeasured_at"] == again["remeasured_at"]

    # What does not exist is named.
    assert reingest("nosuchrun").returncode == 3 and "no run nosuchrun" in reingest("nosuchrun").stderr
    assert reingest("--project", "nosuchproject").returncode == 3

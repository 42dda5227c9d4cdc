"""A metric added to the catalog (`benchtrail/metrics.py`) alone shows in the run's tables, in criteria, in History
and in Compare: a process that registers one more entry, P85 latency (computed from the cells' histograms, with no
column of its own), before it imports the rest of the server, uploads two runs through the API, ingests and
analyses them as the worker does, and reads every view. The P85 of each cell is computed here from the raw JTL rows
(csv + numpy, nearest rank), independently of the server."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from infra.localstack import REPO
from tests.support.jtl import thread_group_size, write_jtl

P85 = "latency_p85"

SCRIPT = r'''
import json, os, sys
from pathlib import Path

from benchtrail import metrics
metrics.register(metrics.Metric("latency_p85", "ms", "lower", "P85 latency", stored=False, percentile=85.0,
                                criterion=True, table=8, chart=7, pick=True))

from fastapi.testclient import TestClient   # noqa: E402  (after the catalog has its new entry)

from benchtrail.app import create_app  # noqa: E402
from benchtrail.db_boundary import unit_of_work  # noqa: E402
from benchtrail.ingest.service import ingest_run  # noqa: E402
from benchtrail.trails.analysis import analyse_run  # noqa: E402

token, slug, files = os.environ["P85_TOKEN"], os.environ["P85_PROJECT"], json.loads(os.environ["P85_FILES"])
auth = {"Authorization": f"Bearer {token}"}
out = {}
with TestClient(create_app()) as client:
    runs = []
    for version, (baseline, agent) in files.items():
        meta = {"files": [{"variant": "baseline"}, {"variant": "agent"}], "agent_version": version,
                "reference": "baseline", "criteria": [{"metric": "latency_p85", "op": "<", "value": 1000000}]}
        r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth, data={"metadata": json.dumps(meta)},
                        files=[("files", (Path(p).name, Path(p).read_bytes())) for p in (baseline, agent)])
        assert r.status_code == 202, r.text
        run_id, run_slug = r.json()["id"], r.json()["run"]
        with unit_of_work() as session:          # what the worker's ingest and analysis tasks do
            ingest_run(session, run_id)
        with unit_of_work() as session:
            analyse_run(session, run_id)
        runs.append(run_slug)
    out["runs"] = [client.get(f"/api/v1/runs/{s}").json() for s in runs]
    snapshot = client.post("/api/v1/snapshots", json={"run": runs[-1]}, headers=auth)
    assert snapshot.status_code == 201, snapshot.text
    out["markdown"] = client.get(f"/api/v1/snapshots/{snapshot.json()['slug']}/markdown").text
    trails = client.get(f"/api/v1/projects/{slug}/trails", params={"variant": "agent"}).json()["items"]
    out["trails"] = {t["id"]: client.get(f"/api/v1/trails/{t['id']}", params={"metric": "latency_p85"}).json()
                     for t in trails}
    out["compare"] = client.get("/api/v1/compare", params={"a": runs[0], "b": runs[1], "metric": "latency_p85"}).json()
    out["overheads"] = client.get(f"/api/v1/runs/{runs[-1]}/overheads", params={"metric": "latency_p85"}).json()
    doc = client.get("/api/openapi.json").json()
    out["criterion_metrics"] = doc["components"]["schemas"]["CriterionIn"]["properties"]["metric"]["enum"]
print(json.dumps(out))
'''


def p85_of(path: Path) -> dict[tuple[str, int], float]:
    """Nearest-rank P85 of each (label, thread group) of a JTL, from its rows."""
    groups: dict[tuple[str, int], list[float]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            groups.setdefault((row["label"], thread_group_size(row["threadName"])), []).append(float(row["elapsed"]))
    return {k: float(np.percentile(v, 85, method="inverted_cdf")) for k, v in groups.items()}


@pytest.fixture()
def extended_server(infra: dict[str, str], make_project, scratch: Path):  # type: ignore[no-untyped-def]
    slug, token = make_project(role="admin")
    files = {}
    for i, version in enumerate(("1.0.0", "1.1.0")):
        files[version] = [str(write_jtl(scratch / f"baseline-{i}.jtl", seed=40 + i, per_group=150)),
                          str(write_jtl(scratch / f"agent-{i}.jtl", seed=50 + i, per_group=150, slowdown=1.1 + i / 10))]
    # A Redis database of its own: no worker of the session takes this process's jobs (it ingests them itself).
    redis_url = infra["BENCHTRAIL_REDIS_URL"].rsplit("/", 1)[0] + "/7"
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")},
           "BENCHTRAIL_REDIS_URL": redis_url, "P85_TOKEN": token, "P85_PROJECT": slug, "P85_FILES": json.dumps(files),
           "PYTHONPATH": os.pathsep.join(str(REPO / p) for p in ("", "backend", "worker", "worker/runner"))}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), files


def test_a_metric_added_to_the_catalog_shows_in_tables_criteria_history_and_compare(extended_server) -> None:
    out, files = extended_server
    assert P85 in out["criterion_metrics"]
    expected = {(version, variant): p85_of(Path(path)) for version, pair in files.items()
                for variant, path in zip(("baseline", "agent"), pair)}
    cells_by_run = []
    for run, version in zip(out["runs"], files):
        assert run["status"] == "completed", run["status_detail"]
        variants = {v["id"]: v["name"] for v in run["variants"]}
        scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
        loads = {ld["id"]: int(ld["value"]) for ld in run["loads"]}
        cells = {(variants[c["variant_id"]], scenarios[c["scenario_id"]], loads[c["load_id"]]): c for c in run["cells"]}
        cells_by_run.append(cells)
        # The run document (and so every table of the run): each cell's P85, at HDR precision.
        for (variant, label, threads), cell in cells.items():
            if label == "*":
                continue
            assert cell[P85] == pytest.approx(expected[(version, variant)][(label, threads)], rel=1e-3)
        # Criteria: judged on every cell (all pass: the bound is far above), with the observed P85.
        rows = [c for c in run["criteria"] if c["criterion"].startswith(P85)]
        assert rows and all(c["ok"] is True for c in rows)
        whole = [c for c in rows if c["variant"] == "agent" and c["scenario"] is None]
        assert whole and all(c["observed"] == pytest.approx(cells[("agent", "*", t)][P85], rel=1e-9)
                             for c, t in zip(whole, sorted(loads.values())))
    # The snapshot's Markdown tables have its column.
    assert "P85 latency" in out["markdown"]
    # History: the agent's trails follow it, one point per version, the cells' values.
    newest = cells_by_run[-1]
    followed = [t for t in out["trails"].values() if t["points"]]
    assert len(followed) >= 6   # two labels and their all-scenarios row, at three thread groups
    for trail in followed:
        assert [p["agent_version"] for p in trail["points"]] == list(files)
        key = ("agent", trail["trail"]["scenario"], _threads(trail["trail"]["load_key"]))
        assert trail["points"][-1]["value"] == pytest.approx(newest[key][P85], rel=1e-9)
    # Compare: run b minus run a, per cell, for it.
    items = out["compare"]["items"]
    assert items and {i["metric"] for i in items} == {P85}
    for item in items:
        a, b = cells_by_run[0], cells_by_run[1]
        key = (item["b_variant"], item["cell"]["scenario"], _threads(item["cell"]["load_key"]))
        if key[1] == "*":
            continue
        assert item["result"]["abs_diff"] == pytest.approx(b[key][P85] - a[key][P85], rel=1e-6)
    # A run's overheads: the agent minus the baseline for it.
    over = [o for o in out["overheads"]["items"] if o["variant"] == "agent"]
    assert over
    for o in over:
        key = (o["cell"]["scenario"], _threads(o["cell"]["load_key"]))
        assert o["result"]["abs_diff"] == pytest.approx(newest[("agent", *key)][P85] - newest[("baseline", *key)][P85],
                                                        rel=1e-6)


def _threads(load_key: str) -> int:
    """'threads:50' -> 50."""
    return int(float(load_key.split(":")[1]))

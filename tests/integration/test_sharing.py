"""Images and snapshots to share: a chart and a badge load from their URLs alone (no dashboard), and
a frozen snapshot keeps its numbers after the run is analysed again with other settings."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import numpy as np
from matplotlib import image as mpimg

from benchtrail.db_boundary import unit_of_work
from benchtrail.jobs import enqueue
from infra.localstack import wait_until
from tests.support.api import ab_run
from tests.support.jtl import LABELS


def svg_texts(body: bytes) -> str:
    return " ".join(t for t in ET.fromstring(body).itertext())


def test_a_run_chart_and_a_trail_badge_load_from_their_urls(client, worker, make_project, scratch):
    _, _, run = ab_run(client, make_project, scratch)
    svg = client.get(f"/api/v1/runs/{run['slug']}/charts/latency_p75.svg")
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert svg.headers["cache-control"] == "public, max-age=300"
    text = svg_texts(svg.content)
    for scenario in LABELS:
        for load in ("10 threads", "20 threads", "50 threads"):
            assert f"{scenario} · {load}" in text
    assert "baseline" in text and "agent" in text
    again = client.get(f"/api/v1/runs/{run['slug']}/charts/latency_p75.svg",
                       headers={"If-None-Match": svg.headers["etag"]})
    assert again.status_code == 304

    png = client.get(f"/api/v1/runs/{run['slug']}/charts/throughput.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    pixels = mpimg.imread(io.BytesIO(png.content), format="png")
    assert pixels.shape[1] == 900 and pixels.shape[2] == 4
    assert client.get(f"/api/v1/runs/{run['slug']}/charts/nonsense.svg").status_code == 422
    assert client.get(f"/api/v1/runs/{run['slug']}/charts/latency_p75.gif").status_code == 422

    # The badge: the newest overhead of the agent's P75 trail at 50 threads, from the run's own cells.
    variants = {v["name"]: v["id"] for v in run["variants"]}
    loads = {l["id"]: l["label"] for l in run["loads"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    cells = {(scenarios[c["scenario_id"]], loads[c["load_id"]], c["variant_id"]): c for c in run["cells"]}
    key = (next(iter(LABELS)), "50 threads")
    ref, var = cells[(*key, variants["baseline"])], cells[(*key, variants["agent"])]
    rel = var["latency_p75"] / ref["latency_p75"] - 1
    badge = client.get(f"/api/v1/trails/{var['trail_id']}/badge.svg", params={"metric": "latency_p75"})
    assert badge.status_code == 200 and badge.headers["content-type"] == "image/svg+xml"
    assert f"{100 * rel:+.1f}%" in svg_texts(badge.content)


def test_a_frozen_snapshot_keeps_its_numbers(client, worker, make_project, scratch, admin_token):
    slug, token, run = ab_run(client, make_project, scratch)
    anonymous = client.post("/api/v1/snapshots", json={"run": run["slug"]})
    assert anonymous.status_code == 401
    r = client.post("/api/v1/snapshots", json={"run": run["slug"], "view": {"path": f"/r/{run['slug']}",
                                                                           "query": "load=50"}},
                    headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 201, r.text
    frozen = r.json()
    assert frozen["view"] == {"path": f"/r/{run['slug']}", "query": "load=50"}
    assert frozen["data"]["run"]["cells"] == run["cells"]
    assert frozen["permalink"].endswith(f"/s/{frozen['slug']}")
    md = client.get(f"/api/v1/snapshots/{frozen['slug']}/markdown").text
    assert md.count("| Scenario |") == 3 and all(name in md for name in LABELS)

    # Analyse the run again under other settings; the stored overheads are rewritten...
    before = client.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": "latency_p75"}).json()
    settings = client.get(f"/api/v1/projects/{slug}/settings").json()["analysis"]
    settings["metrics"] = ["latency_p75", "throughput"]
    assert client.patch(f"/api/v1/projects/{slug}/settings", json=settings,
                        headers={"Authorization": f"Bearer {admin_token}"}).status_code == 200
    with unit_of_work() as session:
        enqueue(session, "analysis.run", run["id"], force=True)
    wait_until(lambda: client.get(f"/api/v1/runs/{run['slug']}").json()["analysis_status"] == "done", 60,
               "the forced re-analysis")
    # ...and the snapshot still shows what it showed, byte for byte.
    later = client.get(f"/api/v1/snapshots/{frozen['slug']}").json()
    assert json.dumps(later["data"], sort_keys=True) == json.dumps(frozen["data"], sort_keys=True)
    assert later["data"]["overheads"]["latency_p75"]["items"] == before["items"]
    assert client.get(f"/api/v1/snapshots/{frozen['slug']}/markdown").text == md
    chart = client.get(f"/api/v1/snapshots/{frozen['slug']}/charts/latency_p75.svg")
    assert chart.status_code == 200 and next(iter(LABELS)) in svg_texts(chart.content)
    assert np.isfinite(later["data"]["overheads"]["latency_p75"]["items"][0]["result"]["abs_diff"])

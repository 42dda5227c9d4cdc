"""Annotations as known change points, alert triage with its history, run comparison, and
confirm-before-alert for scheduled runs. Uploads are small JMH tables with known steps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from tests.support.jmh import upload_scores as upload



def levels(n: int, steps: dict[int, float], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference ~2 ms; the agent adds 5% plus `steps[i]` percentage points from version i on."""
    rng = np.random.default_rng(seed)
    ref = 2.0 * (1 + rng.normal(0, 0.003, n))
    added = np.array([5.0 + sum(v for s, v in steps.items() if i >= s) for i in range(n)])
    return np.round(ref, 4), np.round(ref * (1 + (added + rng.normal(0, 0.3, n)) / 100), 4)


def score_only(client, admin_token, slug, **more):
    r = client.patch(f"/api/v1/projects/{slug}/settings", json={"metrics": ["score"], **more},
                     headers={"Authorization": f"Bearer {admin_token}"})
    assert r.status_code == 200, r.text


def test_annotation_marks_known_change_and_triage_is_recorded(client, worker, make_project, admin_token):
    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    score_only(client, admin_token, slug)
    r = client.post(f"/api/v1/projects/{slug}/annotations", json={
        "kind": "jdk", "title": "JDK 17 → 21", "agent_version": "1.4.0", "known_change": True}, headers=auth)
    assert r.status_code == 201, r.text
    assert client.post(f"/api/v1/projects/{slug}/annotations", json={"title": "x", "agent_version": "1.0.0"}
                       ).status_code == 401

    ref, agent = levels(11, {4: 10.0, 7: 10.0}, seed=11)
    runs = [upload(client, slug, token, f"1.{i}.0", ref[i], agent[i]) for i in range(11)]

    alerts = client.get(f"/api/v1/projects/{slug}/alerts").json()["items"]
    assert sorted((a["run"], a["kind"]) for a in alerts) == [(runs[7]["slug"], "overhead"), (runs[7]["slug"], "trail")]
    trail_id = alerts[0]["trail"]["id"]
    detail = client.get(f"/api/v1/trails/{trail_id}", params={"metric": "score"}).json()
    assert [a["title"] for a in detail["annotations"]] == ["JDK 17 → 21"]
    cps = detail["change_points"]
    assert [(c["agent_version"], c["known"]) for c in cps][0] == ("1.4.0", True)  # drawn, never alerted
    assert [c["agent_version"] for c in cps] == ["1.4.0", "1.7.0"]
    assert cps[0]["after_mean"] - cps[0]["before_mean"] == pytest.approx(agent[4:7].mean() - agent[:4].mean(),
                                                                         rel=1e-9)

    alert_id = alerts[0]["id"]
    assert client.patch(f"/api/v1/alerts/{alert_id}", json={"state": "acknowledged"}).status_code == 401
    viewer = client.post(f"/api/v1/projects/{slug}/tokens", json={"name": "v", "role": "viewer"},
                         headers={"Authorization": f"Bearer {admin_token}"}).json()["token"]
    assert client.patch(f"/api/v1/alerts/{alert_id}", json={"state": "acknowledged"},
                        headers={"Authorization": f"Bearer {viewer}"}).status_code == 403
    r = client.patch(f"/api/v1/alerts/{alert_id}", json={"state": "investigating", "assignee": "ana",
                                                        "note": "bisecting 1.6.0..1.7.0"}, headers=auth)
    assert r.status_code == 200, r.text
    r = client.patch(f"/api/v1/alerts/{alert_id}", json={"state": "wontfix", "notes": "span batching costs 10%"},
                     headers=auth)
    body = r.json()
    assert (body["state"], body["assignee"], body["notes"]) == ("wontfix", "ana", "span batching costs 10%")
    assert [(e["from_state"], e["to_state"], e["actor"]) for e in body["events"]] == [
        ("new", "investigating", "uploader-token"), ("investigating", "wontfix", "uploader-token")]
    assert "bisecting" in body["events"][0]["note"] and "assignee" in body["events"][0]["note"]
    assert client.patch(f"/api/v1/alerts/{alert_id}", json={"state": "gone"}, headers=auth).status_code == 422
    listed = client.get(f"/api/v1/projects/{slug}/alerts", params={"state": "wontfix"}).json()["items"]
    assert [a["id"] for a in listed] == [alert_id]

    # Comparing the first and last runs cell by cell: the agent went from +5% to +25% of the
    # reference; the Welch interval from JMH's score ± error, recomputed here.
    cmp = client.get("/api/v1/compare", params={"a": runs[0]["slug"], "b": runs[10]["slug"], "metric": "score"}).json()
    row = next(i for i in cmp["items"] if i["a_variant"] == "agent")
    se = 0.002 / stats.t.ppf(0.9995, 1999)
    half = stats.t.ppf(0.975, 2 * 1999) * math.sqrt(2) * se  # equal errors and counts: df = 2(n-1)
    assert row["result"]["abs_diff"] == pytest.approx(agent[10] - agent[0], abs=1e-12)
    assert row["result"]["ci_low"] == pytest.approx(agent[10] - agent[0] - half, rel=1e-6)
    rel = (agent[10] - agent[0]) / agent[0]
    assert 0.05 < rel < 0.20  # 1.25/1.05 - 1 ≈ 19%: "medium" by the verdict's bands (5-20%)
    assert row["result"]["verdict"] == "medium" and row["result"]["worse"] is True
    cross = client.get("/api/v1/compare", params={"a": runs[10]["slug"], "b": runs[10]["slug"], "a_variant": "baseline",
                                                  "b_variant": "agent", "metric": "score"}).json()["items"]
    assert len(cross) == 1 and cross[0]["result"]["rel_diff"] == pytest.approx((agent[10] - ref[10]) / ref[10])


def test_scheduled_run_alerts_only_after_its_confirmation(client, worker, make_project, admin_token):
    slug, token = make_project()
    score_only(client, admin_token, slug, confirm_scheduled=True)
    ref, agent = levels(7, {4: 10.0}, seed=5)
    runs = [upload(client, slug, token, f"2.{i}.0", ref[i], agent[i], source="schedule") for i in range(7)]
    # The sixth point completes the step but the run is scheduled: suspected, not alerted.
    assert client.get(f"/api/v1/projects/{slug}/alerts").json()["items"] == []
    suspected = runs[6]["meta"]["suspected"]
    assert sorted(s["kind"] for s in suspected) == ["overhead", "trail"]
    assert all(s["culprit_run_id"] == runs[4]["id"] for s in suspected)

    # A re-run that does not reproduce the new level (back at 5%) confirms nothing ...
    back = upload(client, slug, token, "2.6.0", ref[3], agent[3], source="schedule",
                  labels={"confirmation_of": runs[6]["slug"]})
    assert back["alerts"] == [] and client.get(f"/api/v1/projects/{slug}/alerts").json()["items"] == []
    # ... one that does raises both alerts, attributed to the step and to the confirming run.
    again = upload(client, slug, token, "2.6.0", ref[6], agent[6], source="schedule",
                   labels={"confirmation_of": runs[6]["slug"]})
    assert sorted(a["kind"] for a in again["alerts"]) == ["overhead", "trail"]
    assert all(a["run"] == runs[4]["slug"] for a in again["alerts"])
    # The run document's alerts name their trail and culprit, as the project's alert list does.
    listed = {a["id"]: a for a in client.get(f"/api/v1/projects/{slug}/alerts").json()["items"]}
    for a in again["alerts"]:
        assert a["run_permalink"].endswith(f"/r/{runs[4]['slug']}") and a["state"] == "new"
        assert a["summary"] == listed[a["id"]]["summary"] and "agent 2.4.0" in a["summary"]

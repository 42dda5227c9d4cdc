"""What the dashboard needs beyond reads: annotations edited and deleted by an uploader, a plan's
YAML text kept as written, and a JMH trail's points with their ± error for error bars."""

from __future__ import annotations

import json

import yaml

from tests.support.jmh import upload_scores as upload

PLAN_YAML = """\
# Nightly smoke test: comments and key order are the author's.
version: 1
name: smoke
tool: hey
pool: nowhere
loads:
  - concurrency: 1
    requests: 10   # ten is enough
scenarios:
  - name: ok
    path: /ok
variants:
  - name: target
    role: reference
    target: http://127.0.0.1:9
"""


def test_annotation_edit_and_delete_need_an_uploader(client, make_project, admin_token):
    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    r = client.post(f"/api/v1/projects/{slug}/tokens", json={"name": "viewer", "role": "viewer"},
                    headers={"Authorization": f"Bearer {admin_token}"})
    assert r.status_code == 201, r.text
    viewer = r.json()["token"]
    r = client.post(f"/api/v1/projects/{slug}/annotations", json={"kind": "jdk", "title": "JDK 21",
                                                                 "agent_version": "1.4.0"}, headers=auth)
    assert r.status_code == 201, r.text
    aid = r.json()["id"]
    url = f"/api/v1/projects/{slug}/annotations/{aid}"

    assert client.patch(url, json={"title": "x"}).status_code == 401
    assert client.patch(url, json={"title": "x"}, headers={"Authorization": f"Bearer {viewer}"}).status_code == 403
    assert client.delete(url, headers={"Authorization": f"Bearer {viewer}"}).status_code == 403
    r = client.patch(url, json={"title": "JDK 21 on the load host", "known_change": True}, headers=auth)
    assert r.status_code == 200, r.text
    assert (r.json()["title"], r.json()["kind"], r.json()["agent_version"], r.json()["known_change"]) == \
        ("JDK 21 on the load host", "jdk", "1.4.0", True)

    # Nothing to place it on the axis: refused, nothing changed.
    r = client.patch(url, json={"agent_version": None}, headers=auth)
    assert r.status_code == 422 and "agent_version or at" in r.json()["detail"], r.text
    r = client.patch(url, json={"kind": "weather"}, headers=auth)
    assert r.status_code == 422, r.text
    listed = client.get(f"/api/v1/projects/{slug}/annotations").json()["items"]
    assert [(a["id"], a["title"], a["agent_version"]) for a in listed] == [(aid, "JDK 21 on the load host", "1.4.0")]

    assert client.delete(url, headers=auth).status_code == 204
    assert client.get(f"/api/v1/projects/{slug}/annotations").json()["items"] == []
    assert client.delete(url, headers=auth).status_code == 404


def test_plan_keeps_its_yaml_text_and_json_plans_have_none(client, make_project):
    slug, token = make_project(role="admin")
    auth = {"Authorization": f"Bearer {token}"}
    r = client.post(f"/api/v1/projects/{slug}/plans", content=PLAN_YAML,
                    headers={**auth, "Content-Type": "application/yaml"})
    assert r.status_code == 201, r.text
    assert r.json()["source_yaml"] == PLAN_YAML
    assert r.json()["body"] == yaml.safe_load(PLAN_YAML)

    body = {**yaml.safe_load(PLAN_YAML), "name": "from-json"}
    r = client.post(f"/api/v1/projects/{slug}/plans", content=json.dumps(body),
                    headers={**auth, "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    assert r.json()["source_yaml"] is None
    listed = {p["name"]: p["source_yaml"] for p in client.get(f"/api/v1/projects/{slug}/plans").json()["items"]}
    assert listed == {"smoke": PLAN_YAML, "from-json": None}


def test_jmh_trail_points_carry_their_error(client, worker, make_project):
    slug, token = make_project()
    runs = [upload(client, slug, token, f"1.{i}.0", 2.0 + i / 100, 2.1 + i / 100) for i in range(2)]
    trails = client.get(f"/api/v1/projects/{slug}/trails").json()["items"]
    agent = next(t for t in trails if t["variant"] == "agent")
    detail = client.get(f"/api/v1/trails/{agent['id']}", params={"metric": "score"}).json()
    # The uploaded tables print "± 0.0020" for every score.
    assert [(p["run"], p["value"], p["error"]) for p in detail["points"]] == \
        [(runs[0]["slug"], 2.1, 0.002), (runs[1]["slug"], 2.11, 0.002)]
    latency = client.get(f"/api/v1/trails/{agent['id']}", params={"metric": "latency_p75"}).json()
    assert all(p["error"] is None for p in latency["points"])

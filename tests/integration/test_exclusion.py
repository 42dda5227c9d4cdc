"""A run excluded from its trails leaves them: it is marked invalid with who excluded it and why, its
point no longer counts, and the alert it raised moves to where the trail now changes; restored, it counts
again and the alert comes back. Uploads are one-variant JMH tables with a known step."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np

from infra.localstack import VENV_BIN
from tests.support.api import wait_analysed
from tests.support.jmh import upload_score


def test_an_excluded_run_leaves_its_trail_and_its_alert_moves(client, live_api, worker, make_project, admin_token):
    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    r = client.patch(f"/api/v1/projects/{slug}/settings", json={"metrics": ["score"]},
                     headers={"Authorization": f"Bearer {admin_token}"})
    assert r.status_code == 200, r.text
    # 14 versions at 2.0 ms/op; from 1.8.0 on 10% slower.
    rng = np.random.default_rng(8)
    values = [(2.2 if i >= 8 else 2.0) * (1 + rng.normal(0, 0.001)) for i in range(14)]

    runs = [upload_score(client, slug, auth, f"1.{i}.0", values[i]) for i in range(14)]

    def standing() -> list[tuple[str, str]]:
        alerts = client.get(f"/api/v1/projects/{slug}/alerts").json()["items"]
        return sorted((a["agent_version"], a["direction"]) for a in alerts if a["state"] != "withdrawn")

    def point_of(run: dict) -> dict:
        trail = client.get(f"/api/v1/projects/{slug}/alerts").json()["items"][0]["trail"]["id"]
        points = client.get(f"/api/v1/trails/{trail}", params={"metric": "score"}).json()["points"]
        return next(p for p in points if p["run"] == run["slug"])

    assert standing() == [("1.8.0", "regression")]
    culprit = runs[8]["slug"]

    # Who may: not anonymous (401), not a viewer (403); a reason is required (422).
    assert client.put(f"/api/v1/runs/{culprit}/exclusion", json={"reason": "x"}).status_code == 401
    viewer = client.post(f"/api/v1/projects/{slug}/tokens", json={"name": "v", "role": "viewer"},
                         headers={"Authorization": f"Bearer {admin_token}"}).json()["token"]
    assert client.put(f"/api/v1/runs/{culprit}/exclusion", json={"reason": "x"},
                      headers={"Authorization": f"Bearer {viewer}"}).status_code == 403
    assert client.put(f"/api/v1/runs/{culprit}/exclusion", json={"reason": "  "}, headers=auth).status_code == 422

    r = client.put(f"/api/v1/runs/{culprit}/exclusion", json={"reason": "noisy neighbour on the host"}, headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["excluded"], body["reason"], body["is_valid"], body["analysis_status"]) == (
        True, "noisy neighbour on the host", False, "pending")
    run = wait_analysed(client, culprit)
    assert run["is_valid"] is False
    row = next(v for v in run["validity"] if v["check"] == "excluded")
    assert row["ok"] is False and row["detail"].endswith(": noisy neighbour on the host") and row["by"] == body["by"]
    assert point_of(runs[8])["is_valid"] is False
    # Without 1.8.0 the trail changes at 1.9.0: the alert moved there.
    assert standing() == [("1.9.0", "regression")]

    r = client.delete(f"/api/v1/runs/{culprit}/exclusion", headers=auth)
    assert r.status_code == 200, r.text
    assert (r.json()["excluded"], r.json()["reason"], r.json()["is_valid"]) == (False, None, True)
    run = wait_analysed(client, culprit)
    assert run["is_valid"] is True and not any(v["check"] == "excluded" for v in run["validity"])
    assert point_of(runs[8])["is_valid"] is True
    assert standing() == [("1.8.0", "regression")]
    # Restoring a run that is not excluded changes nothing.
    again = client.delete(f"/api/v1/runs/{culprit}/exclusion", headers=auth)
    assert again.status_code == 200 and client.get(f"/api/v1/runs/{culprit}").json()["analysis_status"] == "done"

    # The CLI does the same.
    env = {**os.environ, "BENCHTRAIL_URL": live_api, "BENCHTRAIL_TOKEN": token}
    done = subprocess.run([str(VENV_BIN / "benchtrail"), "exclude", culprit, "--reason", "wrong build", "--json"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (json.loads(done.stdout)["excluded"], json.loads(done.stdout)["reason"]) == (True, "wrong build")
    wait_analysed(client, culprit)
    assert standing() == [("1.9.0", "regression")]
    done = subprocess.run([str(VENV_BIN / "benchtrail"), "restore", culprit], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and f"run {culprit} is in its trails" in done.stdout, done.stdout + done.stderr
    wait_analysed(client, culprit)
    assert standing() == [("1.8.0", "regression")]


def test_only_a_completed_run_is_excluded(client, worker, make_project, scratch):
    """A run that failed (here: its file is malformed past the rows the upload checks) has no points to take out."""
    from tests.support.api import upload as upload_files
    from tests.support.api import wait_run
    from tests.support.jtl import write_jtl

    slug, token = make_project()
    path = write_jtl(scratch / "late-error.jtl", seed=5, per_group=20_000)   # 120,000 samples
    lines = path.read_bytes().split(b"\n")
    row = lines[100_000].split(b",")
    row[1] = b"abc"
    lines[100_000] = b",".join(row)
    path.write_bytes(b"\n".join(lines))
    r = upload_files(client, slug, token, [("baseline", path)])
    assert r.status_code == 202, r.text
    run = wait_run(client, r.json()["run"], timeout=120)
    assert run["status"] == "failed", run
    r = client.put(f"/api/v1/runs/{run['slug']}/exclusion", json={"reason": "x"},
                   headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 409 and "only a completed run" in r.json()["detail"], r.text

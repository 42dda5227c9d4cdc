"""Token scopes and plan checks (issue 14, "scopes that hold"), through the real app and PostgreSQL:
only a runner token claims and reports a run, only within its pools; a runner token is no uploader
and sees no private project except the runs it executes; every URL and path in a plan is checked;
plan headers are never shown; scheduled runs carry their agent version."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.harness import VENV_BIN


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_runner_token(name: str, pools: list[str] | None = None) -> str:
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.projects.service import create_token

    with unit_of_work() as session:
        return create_token(session, project=None, name=name, role="runner", pools=pools).token


def plan(name: str, pool: str = "scopes-idle", **extra) -> dict:
    # The pool has no runner in these tests: a started run stays queued for the test to claim.
    body = {"version": 1, "name": name, "tool": "hey", "pool": pool,
            "variants": [{"name": "base", "role": "reference", "target": "http://127.0.0.1:18999"}],
            "scenarios": [{"name": "ok", "path": "/ok"}], "loads": [{"concurrency": 1, "requests": 10}]}
    body.update(extra)
    return body


def post_plan(client, slug: str, token: str, body: dict):
    return client.post(f"/api/v1/projects/{slug}/plans", json=body, headers=auth(token))


def queued_run(client, slug: str, token: str, body: dict) -> str:
    r = post_plan(client, slug, token, body)
    assert r.status_code == 201, r.text
    r = client.post(f"/api/v1/projects/{slug}/plans/{body['name']}/runs", json={}, headers=auth(token))
    assert r.status_code == 202, r.text
    return r.json()["slug"]


def upload_run(client, slug: str, token: str):
    return client.post(f"/api/v1/projects/{slug}/runs", headers=auth(token),
                       data={"metadata": '{"files": [{"variant": "a"}]}'},
                       files=[("files", ("a.jtl", b"timeStamp,elapsed\n1,2\n"))])


# ------------------------------------------------------------------ 1. only a runner token drives a run


def test_project_tokens_cannot_claim_or_report_a_run(client, make_project):
    slug, admin = make_project(role="admin")
    run = queued_run(client, slug, admin, plan("no-claim"))
    # The project's own admin token (it outranks uploader) is refused on every runner endpoint.
    for path, body in (("claim", {}), ("progress", {"percent": 10}),
                       ("finish", {"status": "failed", "reason": "x"})):
        r = client.post(f"/api/v1/runs/{run}/{path}", json=body, headers=auth(admin))
        assert r.status_code == 403, (path, r.text)
        assert r.json() == {"error": "Forbidden", "detail": "token 'admin-token' is not a runner token; only a "
                            "runner token (benchtrail admin create-token --role runner) may claim or report a run"}
    r = client.post(f"/api/v1/runs/{run}/results", headers=auth(admin), data={"metadata": "{}"},
                    files=[("files", ("a.jtl", b"timeStamp,elapsed\n1,2\n"))])
    assert r.status_code == 403 and r.json()["error"] == "Forbidden", r.text
    r = client.post(f"/api/v1/runs/{run}/claim", json={})
    assert r.status_code == 401
    assert r.json() == {"error": "Unauthorized", "detail": "claiming or reporting a run needs a runner token"}
    assert client.get(f"/api/v1/runs/{run}").json()["status"] == "queued"


def test_runner_token_is_no_uploader_and_sees_no_private_project(client, make_project):
    runner = new_runner_token("scopes-runner-upload")
    public, _ = make_project(public=True)
    private, _ = make_project(public=False)
    r = upload_run(client, public, runner)
    assert r.status_code == 403, r.text
    assert r.json() == {"error": "Forbidden", "detail": "runner token 'scopes-runner-upload' may only claim and "
                        f"report plan runs; it has no 'uploader' role on project '{public}'"}
    # A private project stays invisible: 404, as for any token without a role on it.
    r = upload_run(client, private, runner)
    assert r.status_code == 404 and r.json()["error"] == "NotFound", r.text
    assert client.get(f"/api/v1/projects/{private}", headers=auth(runner)).status_code == 404
    assert client.get(f"/api/v1/projects/{private}/runs", headers=auth(runner)).status_code == 404
    listed = client.get("/api/v1/projects", headers=auth(runner)).json()["items"]
    assert private not in [p["slug"] for p in listed]


def test_runner_reads_and_reports_only_the_private_run_it_claimed(client, make_project):
    slug, admin = make_project(public=False, role="admin")
    runner, other = new_runner_token("scopes-claimer"), new_runner_token("scopes-other")
    run = queued_run(client, slug, admin, plan("private-run"))
    second = queued_run(client, slug, admin, plan("private-run-2"))
    # Before claiming, the run of a private project is as invisible to a runner as to anyone.
    assert client.get(f"/api/v1/runs/{run}", headers=auth(runner)).status_code == 404
    r = client.post(f"/api/v1/runs/{run}/claim?runner=r1", json={}, headers=auth(runner))
    assert r.status_code == 200, r.text
    seen = client.get(f"/api/v1/runs/{run}", headers=auth(runner))
    assert seen.status_code == 200 and seen.json()["status"] == "running"
    # Claiming one run opens neither the project nor its other runs.
    assert client.get(f"/api/v1/runs/{second}", headers=auth(runner)).status_code == 404
    assert client.get(f"/api/v1/projects/{slug}", headers=auth(runner)).status_code == 404
    # Another runner token can neither report on it nor claim it again.
    r = client.post(f"/api/v1/runs/{run}/progress", json={"percent": 50}, headers=auth(other))
    assert r.status_code == 403
    assert r.json() == {"error": "Forbidden", "detail": f"run '{run}' was not claimed by runner token "
                        "'scopes-other'; only the runner that claimed a run reports on it"}
    r = client.post(f"/api/v1/runs/{run}/claim", json={}, headers=auth(other))
    assert r.status_code == 409 and r.json()["error"] == "Conflict"
    r = client.post(f"/api/v1/runs/{run}/progress", json={"percent": 50, "log": ["half"]}, headers=auth(runner))
    assert r.status_code == 200 and r.json() == {"cancel_requested": False}
    r = client.post(f"/api/v1/runs/{run}/finish", json={"status": "failed", "reason": "test over"},
                    headers=auth(runner))
    assert r.status_code == 200 and r.json()["status"] == "failed"
    seen = client.get(f"/api/v1/runs/{run}", headers=auth(admin)).json()
    assert seen["status"] == "failed"


# ------------------------------------------------------------------ 2. runner tokens scoped to pools


def test_runner_token_claims_only_in_its_pools(client, make_project):
    slug, admin = make_project(role="admin")
    scoped = new_runner_token("scopes-ab", pools=["scopes-a", "scopes-b"])
    unscoped = new_runner_token("scopes-any")
    in_c = queued_run(client, slug, admin, plan("in-c", pool="scopes-c"))
    in_b = queued_run(client, slug, admin, plan("in-b", pool="scopes-b"))
    r = client.post(f"/api/v1/runs/{in_c}/claim", json={}, headers=auth(scoped))
    assert r.status_code == 403
    assert r.json() == {"error": "Forbidden", "detail": "runner token 'scopes-ab' may claim runs of pools "
                        f"scopes-a, scopes-b; run '{in_c}' is in pool 'scopes-c'"}
    assert client.get(f"/api/v1/runs/{in_c}").json()["status"] == "queued"
    r = client.post(f"/api/v1/runs/{in_b}/claim", json={}, headers=auth(scoped))
    assert r.status_code == 200, r.text
    # A runner token created without pools claims from every pool.
    r = client.post(f"/api/v1/runs/{in_c}/claim", json={}, headers=auth(unscoped))
    assert r.status_code == 200, r.text


def test_cli_creates_a_pool_scoped_runner_token(client, make_project, infra):
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")}}
    cli = [str(VENV_BIN / "benchtrail"), "admin", "create-token", "--role", "runner", "--name", "scopes-cli"]
    done = subprocess.run([*cli, "--pools", "scopes-cli-a,scopes-cli-b"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    slug, admin = make_project(role="admin")
    outside = queued_run(client, slug, admin, plan("cli-out", pool="scopes-c"))
    inside = queued_run(client, slug, admin, plan("cli-in", pool="scopes-cli-b"))
    assert client.post(f"/api/v1/runs/{outside}/claim", json={}, headers=auth(token)).status_code == 403
    assert client.post(f"/api/v1/runs/{inside}/claim", json={}, headers=auth(token)).status_code == 200
    # Pools belong to runner tokens only; an empty pool name is refused; nothing is printed as a token.
    bad = subprocess.run([str(VENV_BIN / "benchtrail"), "admin", "create-token", "--role", "admin", "--name", "x",
                          "--pools", "a"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "only a runner token is scoped to pools" in bad.stdout + bad.stderr
    bad = subprocess.run([*cli, "--pools", "a,,b"], env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "none empty" in bad.stdout + bad.stderr
    assert "bt_" not in bad.stdout

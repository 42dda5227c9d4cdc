"""Token scopes and plan checks (issue 14, "scopes that hold"), through the real app and PostgreSQL:
only a runner token claims and reports a run, only within its pools; a runner token is no uploader
and sees no private project except the runs it executes; every URL and path in a plan is checked;
plan headers are never shown; scheduled runs carry their agent version."""

from __future__ import annotations

import os
import subprocess


from infra.localstack import VENV_BIN
from tests.support.api import auth, new_runner_token, queued_run


def plan(name: str, pool: str = "scopes-idle", **extra) -> dict:
    # The pool has no runner in these tests: a started run stays queued for the test to claim.
    body = {"version": 1, "name": name, "tool": "hey", "pool": pool,
            "variants": [{"name": "base", "role": "reference", "target": "http://127.0.0.1:18999"}],
            "scenarios": [{"name": "ok", "path": "/ok"}], "loads": [{"concurrency": 1, "requests": 10}]}
    body.update(extra)
    return body


def post_plan(client, slug: str, token: str, body: dict):
    return client.post(f"/api/v1/projects/{slug}/plans", json=body, headers=auth(token))


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
        assert r.json() == {"error": "Forbidden", "code": "not_a_runner_token", "detail": "token 'admin-token' is not a runner token; only a "
                            "runner token (benchtrail admin create-token --role runner) may claim or report a run"}
    r = client.post(f"/api/v1/runs/{run}/results", headers=auth(admin), data={"metadata": "{}"},
                    files=[("files", ("a.jtl", b"timeStamp,elapsed\n1,2\n"))])
    assert r.status_code == 403 and r.json()["error"] == "Forbidden", r.text
    r = client.post(f"/api/v1/runs/{run}/claim", json={})
    assert r.status_code == 401
    assert r.json() == {"error": "Unauthorized", "code": "runner_token_required", "detail": "claiming or reporting a run needs a runner token"}
    assert client.get(f"/api/v1/runs/{run}").json()["status"] == "queued"


def test_runner_token_is_no_uploader_and_sees_no_private_project(client, make_project):
    runner = new_runner_token("scopes-runner-upload")
    public, _ = make_project(public=True)
    private, _ = make_project(public=False)
    r = upload_run(client, public, runner)
    assert r.status_code == 403, r.text
    assert r.json() == {"error": "Forbidden", "code": "runner_token_only_runs", "detail": "runner token 'scopes-runner-upload' may only claim and "
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
    assert r.json() == {"error": "Forbidden", "code": "not_claimed_by_token", "detail": f"run '{run}' was not claimed by runner token "
                        "'scopes-other'; only the runner that claimed a run reports on it"}
    r = client.post(f"/api/v1/runs/{run}/claim", json={}, headers=auth(other))
    assert r.status_code == 409 and r.json()["error"] == "Conflict"
    r = client.post(f"/api/v1/runs/{run}/progress", json={"percent": 50, "log": ["half"]}, headers=auth(runner))
    assert r.status_code == 200 and r.json() == {"cancel_requested": False, "start_at": None,
                                                 "step_start_at": None}
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
    assert r.json() == {"error": "Forbidden", "code": "pool_not_allowed", "detail": "runner token 'scopes-ab' may claim runs of pools "
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


# ------------------------------------------------------------------ 3. every URL and path of a plan checked


def jmeter_plan(name: str, jmx: str) -> dict:
    return {"version": 1, "name": name, "tool": "jmeter", "pool": "scopes-idle",
            "variants": [{"name": "base", "role": "reference", "target": "http://127.0.0.1:18999"}],
            "scenarios": [{"name": "user", "jmx": jmx}], "loads": [{"threads": 1, "loops": 1}]}


def test_plan_urls_outside_the_allow_list_are_refused_naming_the_field(client, make_project):
    slug, admin = make_project(role="admin")
    body = plan("urls", variants=[
        {"name": "base", "role": "reference", "target": "http://127.0.0.1:18999"},
        {"name": "agent", "target": "http://10.9.8.7:8080",
         "resources": {"source": "prometheus", "url": "http://metrics.example.com:9090/api/v1/query"}},
    ])
    r = post_plan(client, slug, admin, body)
    assert r.status_code == 422, r.text
    allow = "BENCHTRAIL_TARGET_ALLOWLIST=127.0.0.1:*,localhost:*,[::1]:*"
    assert r.json()["error"] == "InvalidRequest"
    assert r.json()["problems"] == [
        {"field": "variants[1].target",
         "reason": f"target 'http://10.9.8.7:8080' is not in the target allow-list ({allow})"},
        {"field": "variants[1].resources.url",
         "reason": "resource URL 'http://metrics.example.com:9090/api/v1/query' is not in the target "
                   f"allow-list ({allow})"},
    ]
    assert r.json()["detail"].startswith("plan: variants[1].target: ")
    # Only the Prometheus URL outside: refused alone, naming its field; nothing was stored.
    body["variants"][1]["target"] = "http://127.0.0.1:18998"
    r = post_plan(client, slug, admin, body)
    assert r.status_code == 422 and [p["field"] for p in r.json()["problems"]] == ["variants[1].resources.url"]
    assert client.get(f"/api/v1/projects/{slug}/plans").json()["items"] == []
    # A pid is a process on the runner's host: only with a target on that host.
    pid_plan = plan("pid", variants=[{"name": "base", "role": "reference", "target": "http://10.9.8.7:8080",
                                      "resources": {"source": "process", "pid": 4242}}])
    r = post_plan(client, slug, admin, pid_plan)
    assert r.status_code == 422
    assert {"field": "variants[0].resources.pid",
            "reason": "a pid names a process on the runner's own host: it is accepted only for a target on that "
                      "host (127.0.0.1, ::1, localhost), not '10.9.8.7'"} in r.json()["problems"]
    pid_plan["variants"][0]["target"] = "http://127.0.0.1:18999"
    assert post_plan(client, slug, admin, pid_plan).status_code == 201
    body["variants"][1]["resources"]["url"] = "http://127.0.0.1:9090/api/v1/query"
    assert post_plan(client, slug, admin, body).status_code == 201


def test_plan_jmx_paths_must_stay_in_allowed_folders(client, make_project, tmp_path, monkeypatch):
    from benchtrail.config import get_settings

    allowed_dir = tmp_path / "jmx"
    monkeypatch.setenv("BENCHTRAIL_JMX_DIRS", str(allowed_dir))
    get_settings.cache_clear()
    try:
        slug, admin = make_project(role="admin")
        cases = {
            "/etc/passwd": f"'/etc/passwd' is outside the allowed JMX folders (BENCHTRAIL_JMX_DIRS: {allowed_dir})",
            f"{allowed_dir}/../secret.jmx": f"'{allowed_dir}/../secret.jmx' is outside the allowed JMX folders "
                                            f"(BENCHTRAIL_JMX_DIRS: {allowed_dir})",
            "../../etc/test.jmx": "'../../etc/test.jmx' climbs out of the plan's folder ('..' is not allowed)",
        }
        for i, (jmx, reason) in enumerate(cases.items()):
            r = post_plan(client, slug, admin, jmeter_plan(f"jmx-bad-{i}", jmx))
            assert r.status_code == 422, r.text
            assert r.json()["problems"] == [{"field": "scenarios[0].jmx", "reason": reason}]
        assert client.get(f"/api/v1/projects/{slug}/plans").json()["items"] == []
        for i, jmx in enumerate((f"{allowed_dir}/orders/checkout.jmx", "tests/checkout.jmx")):
            r = post_plan(client, slug, admin, jmeter_plan(f"jmx-ok-{i}", jmx))
            assert r.status_code == 201, r.text
    finally:
        get_settings.cache_clear()


# ------------------------------------------------------------------ 4. plan headers stored apart, never shown


SECRET = "Bearer sut-secret-4f1c"


def test_plan_headers_are_never_shown_and_go_only_to_the_claiming_runner(client, make_project, infra):
    import psycopg

    slug, admin = make_project(public=True, role="admin")
    body = plan("with-headers", scenarios=[
        {"name": "ok", "path": "/ok", "headers": {"Authorization": SECRET, "X-Tenant": "t-77"}},
        {"name": "plain", "path": "/plain"}])
    r = post_plan(client, slug, admin, body)
    assert r.status_code == 201, r.text
    shown = {"Authorization": "***", "X-Tenant": "***"}
    assert r.json()["body"]["scenarios"][0]["headers"] == shown
    for headers in ({}, auth(admin)):  # anonymous on a public project, and the project's admin
        for path in (f"/api/v1/projects/{slug}/plans", f"/api/v1/projects/{slug}/plans/with-headers"):
            got = client.get(path, headers=headers)
            assert got.status_code == 200 and SECRET not in got.text and "t-77" not in got.text
            assert got.json()["items"][0]["body"]["scenarios"][0]["headers"] == shown
    # Stored apart: the plan body column never holds the values.
    url = infra["BENCHTRAIL_DATABASE_URL"].replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(url) as conn:
        stored_body, secrets = conn.execute(
            "select p.body::text, p.secrets from plans p join projects j on j.id = p.project_id "
            "where j.slug = %s", (slug,)).fetchone()
    assert SECRET not in stored_body and secrets == {"ok": {"Authorization": SECRET, "X-Tenant": "t-77"}}
    # Posting back what the API shows keeps the stored values: same version, nothing changed.
    again = post_plan(client, slug, admin, client.get(f"/api/v1/projects/{slug}/plans").json()["items"][0]["body"])
    assert again.status_code == 201 and again.json()["version"] == 1
    # "***" for a header no earlier version had is refused, naming the field.
    bad = plan("with-headers", scenarios=[{"name": "ok", "path": "/ok", "headers": {"X-New": "***"}}])
    r = post_plan(client, slug, admin, bad)
    assert r.status_code == 422
    assert r.json() == {"error": "InvalidRequest", "code": "plan_secret_placeholder", "detail": "plan: scenarios[0].headers.X-New: '***' stands for "
                        "a stored value, but no earlier version of plan 'with-headers' has this header"}
    # Only the claim answer carries them, to the runner token that claims the run.
    r = client.post(f"/api/v1/projects/{slug}/plans/with-headers/runs", json={}, headers=auth(admin))
    run = r.json()["slug"]
    assert SECRET not in client.get(f"/api/v1/runs/{run}", headers=auth(admin)).text
    claimed = client.post(f"/api/v1/runs/{run}/claim", json={}, headers=auth(new_runner_token("scopes-secrets")))
    assert claimed.status_code == 200
    assert claimed.json() == {"cancel_requested": False, "start_at": None, "step_start_at": None, "generators": 1,
                              "share": None,
                              "headers": {"ok": {"Authorization": SECRET, "X-Tenant": "t-77"}}}


def test_runner_sends_the_stored_headers(client, make_project, runner_pool):
    """End to end: a real runner claims the run and hey sends the header values the API never shows."""
    import http.server
    import threading

    from infra.localstack import wait_until

    seen: list[str | None] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args) -> None:  # noqa: ANN002
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        slug, admin = make_project(role="admin")
        body = plan("sends-headers", pool=runner_pool, variants=[
            {"name": "base", "role": "reference", "target": f"http://127.0.0.1:{server.server_port}"}],
            scenarios=[{"name": "ok", "path": "/ok", "headers": {"Authorization": SECRET}}])
        queued_run(client, slug, admin, body)
        wait_until(lambda: len(seen) >= 10, 60, "hey's requests at the target")
        assert set(seen) == {SECRET}
    finally:
        server.shutdown()


# ------------------------------------------------------------------ 5. scheduled runs carry an agent version


def test_scheduled_runs_record_the_agent_version_of_their_schedule_or_plan(client, make_project):
    from datetime import datetime, timedelta, timezone

    from sqlalchemy import select, update

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Run, Schedule
    from benchtrail_worker.tasks.schedules import fire

    slug, admin = make_project(role="admin")
    assert post_plan(client, slug, admin, plan("versioned", agent_version="2.0.0")).status_code == 201
    assert post_plan(client, slug, admin, plan("unversioned")).status_code == 201
    made = {}
    for key, body in (("schedule", {"plan": "versioned", "agent_version": "2.3.1"}),
                      ("plan", {"plan": "versioned"}), ("none", {"plan": "unversioned"})):
        r = client.post(f"/api/v1/projects/{slug}/schedules", json={**body, "cron": "0 3 * * *"}, headers=auth(admin))
        assert r.status_code == 201, r.text
        made[key] = r.json()
    assert made["schedule"]["agent_version"] == "2.3.1" and made["plan"]["agent_version"] is None
    r = client.post(f"/api/v1/projects/{slug}/schedules", json={"plan": "versioned", "cron": "0 3 * * *",
                                                               "agent_version": ""}, headers=auth(admin))
    assert r.status_code == 422
    with unit_of_work() as session:
        session.execute(update(Schedule).where(Schedule.id.in_([s["id"] for s in made.values()]))
                        .values(next_fire_at=datetime.now(timezone.utc) - timedelta(minutes=1)))
    fire.run()
    with unit_of_work() as session:
        recorded = {key: session.scalars(select(Run.agent_version)
                                         .where(Run.labels["schedule"].astext == str(s["id"]))).all()
                    for key, s in made.items()}
    assert recorded == {"schedule": ["2.3.1"], "plan": ["2.0.0"], "none": [None]}
    listed = client.get(f"/api/v1/projects/{slug}/runs?agent_version=2.3.1").json()["items"]
    assert [r["source"] for r in listed] == ["schedule"]
    # A manual start without an agent version records the plan's as well.
    r = client.post(f"/api/v1/projects/{slug}/plans/versioned/runs", json={}, headers=auth(admin))
    assert r.status_code == 202 and r.json()["agent_version"] == "2.0.0"
    # The version can be changed on the schedule.
    r = client.patch(f"/api/v1/projects/{slug}/schedules/{made['plan']['id']}", json={"agent_version": "2.4.0"},
                     headers=auth(admin))
    assert r.status_code == 200 and r.json()["agent_version"] == "2.4.0"


# ------------------------------------------------------------------ a token's last use


def test_a_token_records_its_last_use_at_most_once_a_minute(client, make_project):
    from datetime import timedelta

    from sqlalchemy import select, update

    from benchtrail.auth.tokens import hash_token
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import ApiToken

    slug, token = make_project(role="viewer")
    mine = ApiToken.token_hash == hash_token(token)

    def read_with_token():
        assert client.get(f"/api/v1/projects/{slug}", headers=auth(token)).status_code == 200
        with unit_of_work() as session:
            return session.scalar(select(ApiToken.last_used_at).where(mine))

    first = read_with_token()
    assert first is not None
    # Within the minute the read writes nothing: the stored time stays exactly as it was.
    assert read_with_token() == first
    # Once the stored time is over a minute old, the next read records the use again.
    with unit_of_work() as session:
        session.execute(update(ApiToken).where(mine).values(last_used_at=first - timedelta(minutes=2)))
    assert read_with_token() > first

"""Health, metrics, OpenAPI and the authorization rules, end to end through the real app."""

from __future__ import annotations

import shutil
import subprocess

from infra.localstack import REPO, Redis, shutdown_redis, wait_until


def test_health_ok_names_components(client):
    from benchtrail.config import get_settings

    r = client.get("/api/health")
    assert r.status_code == 200
    body = r.json()
    free = body.pop("disk_free_mb")
    assert body == {"status": "ok", "db": "ok", "redis": "ok"}
    # What statvfs says of the data folder, in MiB (other writers on the machine may move it a little).
    assert abs(free - shutil.disk_usage(get_settings().data_dir).free / (1 << 20)) < 256


def test_health_503_when_redis_down_and_recovers(client, infra):
    port = int(infra["_redis_port"])
    # Stop the session's Redis, then bring a new one up on the same port.
    shutdown_redis(port)
    r = client.get("/api/health")
    assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
    assert r.json()["redis"].startswith("down") and r.json()["db"] == "ok"
    assert r.json()["error"] == "ServiceUnavailable" and "redis" in r.json()["detail"]
    Redis(port=port).start()
    assert wait_until(lambda: client.get("/api/health").status_code == 200, 10, "health to recover")


def test_health_503_when_postgres_down_and_recovers(client, infra):
    pg_dir, port = infra["_pg_dir"], infra["_pg_port"]
    script = str(REPO / "infra/scripts/postgres.sh")
    subprocess.run([script, "stop", pg_dir, port], check=True)
    try:
        r = client.get("/api/health")
        assert r.status_code == 503
        assert r.json()["db"].startswith("down") and r.json()["redis"] == "ok"
    finally:
        subprocess.run([script, "start", pg_dir, port], check=True)
    assert wait_until(lambda: client.get("/api/health").status_code == 200, 15, "health to recover")


def test_metrics_are_prometheus_text(client):
    client.get("/api/health")
    r = client.get("/metrics")
    assert r.status_code == 200
    assert 'benchtrail_http_requests_total{method="GET",route="/api/health"' in r.text


def test_openapi_document(client):
    doc = client.get("/api/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert "/api/v1/projects/{slug}/runs" in doc["paths"]


def test_bad_token_is_401(client):
    r = client.get("/api/v1/projects", headers={"Authorization": "Bearer bt_not-a-real-token"})
    assert r.status_code == 401
    assert r.json()["error"] == "Unauthorized"


def test_viewer_token_cannot_write(client, make_project):
    slug, viewer = make_project(role="viewer")
    r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {viewer}"},
                    data={"metadata": '{"files": [{"variant": "a"}]}'},
                    files=[("files", ("a.jtl", b"timeStamp,elapsed\n1,2\n"))])
    assert r.status_code == 403, r.text
    assert r.json()["error"] == "Forbidden"


def test_private_project_is_404_without_token(client, make_project):
    slug, token = make_project(public=False, role="viewer")
    assert client.get(f"/api/v1/projects/{slug}").status_code == 404
    assert slug not in [p["slug"] for p in client.get("/api/v1/projects").json()["items"]]
    assert client.get(f"/api/v1/projects/{slug}/runs").status_code == 404
    ok = client.get(f"/api/v1/projects/{slug}", headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200 and ok.json()["is_public"] is False
    listed = client.get("/api/v1/projects", headers={"Authorization": f"Bearer {token}"}).json()["items"]
    assert slug in [p["slug"] for p in listed]


def test_token_of_another_project_sees_no_private_project(client, make_project):
    private, _ = make_project(public=False)
    _, other_token = make_project(public=True, role="admin")
    r = client.get(f"/api/v1/projects/{private}", headers={"Authorization": f"Bearer {other_token}"})
    assert r.status_code == 404


def test_tokens_are_stored_hashed(client, make_project, infra):
    import psycopg

    slug, token = make_project()
    url = infra["BENCHTRAIL_DATABASE_URL"].replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(url) as conn:
        rows = conn.execute("select token_hash from api_tokens").fetchall()
    assert all(token not in r[0] for r in rows)
    import hashlib
    assert (hashlib.sha256(token.encode()).hexdigest(),) in rows


def test_creating_a_project_needs_site_admin(client, make_project):
    _, project_admin = make_project(role="admin")
    r = client.post("/api/v1/projects", json={"slug": "nope"}, headers={"Authorization": f"Bearer {project_admin}"})
    assert r.status_code == 403
    r = client.post("/api/v1/projects", json={"slug": "nope"})
    assert r.status_code == 401

"""The API's edge: unstorable text refused naming the field, security headers on every response,
413 before the body is read, rate limits with Retry-After, 503 + Retry-After while PostgreSQL is down,
and the CLI riding out a database outage with exactly one run stored."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit


from infra.localstack import REPO, VENV_BIN, Process, answers, free_port, wait_until
from tests.support.env import stack_env as _env
from tests.support.pg import postgres_down, start_postgres


@contextlib.contextmanager
def app_with(**env: str) -> Iterator[object]:
    """A separate app instance whose edge reads these BENCHTRAIL_* settings (others unchanged)."""
    from benchtrail.app import create_app
    from benchtrail.config import get_settings

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    get_settings.cache_clear()
    try:
        app = create_app()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        get_settings.cache_clear()
    yield app


def test_unstorable_text_is_400_naming_the_field(client, make_project, admin_token) -> None:
    slug, token = make_project(role="admin")
    auth = {"Authorization": f"Bearer {admin_token}"}
    # A token name with a NUL byte, then one with an unpaired surrogate (sent as a JSON escape).
    r = client.post(f"/api/v1/projects/{slug}/tokens", content='{"name": "ci\\u0000bot", "role": "viewer"}',
                    headers={**auth, "Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "InvalidText" and "name" in r.json()["detail"] and "NUL" in r.json()["detail"]
    r = client.post(f"/api/v1/projects/{slug}/tokens", content='{"name": "ci\\ud800bot", "role": "viewer"}',
                    headers={**auth, "Content-Type": "application/json"})
    assert r.status_code == 400 and "body.name" in r.json()["detail"], r.text
    r = client.post(f"/api/v1/projects/{slug}/annotations", json={"title": "release\x1b[31m"}, headers=auth)
    assert r.status_code == 400 and "title" in r.json()["detail"] and "U+001B" in r.json()["detail"], r.text
    # Tabs and new lines are text.
    r = client.post(f"/api/v1/projects/{slug}/annotations", json={"title": "two\tlines\nok", "agent_version": "1.0"}, headers=auth)
    assert r.status_code == 201, r.text


def test_upload_metadata_with_nul_or_mixed_encoding_file(client, make_project, scratch) -> None:
    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    jtl = (b"timeStamp,elapsed,label,responseCode,success\n"
           b"1700000000000,12,GET /a,200,true\n1700000000010,14,GET /a,200,true\n")
    meta = json.dumps({"files": [{"variant": "base\x00line"}], "labels": {"k\ud800": "v"}})
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth, data={"metadata": meta},
                    files=[("files", ("a.jtl", jtl, "text/csv"))])
    assert r.status_code == 400, r.text
    assert r.json()["error"] == "InvalidText" and "files.0.variant" in r.json()["detail"], r.text
    # The head is UTF-8, a later label is Latin-1: read (not a 500), the label decoded.
    mixed = jtl + b"1700000000020,16,GET /caf\xe9,200,true\n"
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth,
                    data={"metadata": json.dumps({"files": [{"variant": "base"}]})},
                    files=[("files", ("mixed.jtl", mixed, "text/csv"))])
    assert r.status_code == 202, r.text
    # A UTF-16 file (byte-order mark) cut in the middle of a character: refused with its line.
    utf16 = b"\xff\xfe" + jtl.decode().encode("utf-16-le") + b"\x00"
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth,
                    data={"metadata": json.dumps({"files": [{"variant": "base"}]})},
                    files=[("files", ("u16.jtl", utf16, "text/csv"))])
    assert r.status_code == 400 and r.json()["file"] == "u16.jtl" and r.json()["line"] == 4, r.text


def test_nul_in_path_or_query_is_400_naming_where(client, make_project) -> None:
    """PostgreSQL cannot take a NUL: the edge refuses it in a path or a query, before any route runs."""
    slug, _ = make_project()
    for url, where in ((f"/api/v1/projects/{slug}%00x", f"path: contains a NUL byte at character {17 + len(slug)}"),
                       (f"/api/v1/projects/{slug}/runs?variant=a&branch=ma%00in",
                        "query parameter 'branch': contains a NUL byte at character 2"),
                       (f"/api/v1/projects/{slug}/runs?x%00=1", "query parameter name 'x': contains a NUL byte")):
        r = client.get(url)
        assert r.status_code == 400, (url, r.text)
        assert r.json() == {"error": "InvalidText", "code": "invalid_text", "detail": where}, url
        assert r.headers.get("x-content-type-options") == "nosniff", url
    # A percent sign that is not a NUL is text as any other.
    assert client.get(f"/api/v1/projects/{slug}/runs?branch=100%25").status_code == 200
    # The docs page keeps its own CSP, and no header is sent twice.
    r = client.get("/api/docs")
    assert "cdn.jsdelivr.net" in r.headers["content-security-policy"]
    names = [k.lower() for k, _ in r.headers.multi_items()]
    assert len(names) == len(set(names)), names


def test_security_headers_on_every_response(client) -> None:
    for path in ("/api/health", "/api/v1/projects", "/api/v1/nope", "/", "/r/some-run"):
        r = client.get(path)
        csp = r.headers.get("content-security-policy", "")
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, (path, r.headers)
        assert "script-src 'self'" in csp and "unsafe-eval" not in csp
        assert r.headers.get("x-content-type-options") == "nosniff", path
        assert r.headers.get("referrer-policy") == "strict-origin-when-cross-origin", path


def test_oversized_content_length_is_413_before_the_body_is_read(live_api: str) -> None:
    """Only headers are sent, announcing 10 GB: the answer must come without waiting for the body."""
    parts = urlsplit(live_api)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(b"POST /api/v1/projects/any/runs HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 10000000000\r\n\r\n")
        started = time.monotonic()
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert time.monotonic() - started < 5
    assert b"content-security-policy" in answer.lower()


def test_chunked_body_counted_as_it_streams(infra, make_project) -> None:
    from fastapi.testclient import TestClient

    slug, token = make_project()
    sent = {"bytes": 0}

    def body() -> Iterator[bytes]:  # no Content-Length: a chunked multipart request of 3 MB
        yield (b'--b\r\nContent-Disposition: form-data; name="files"; filename="a.jtl"\r\n'
               b"Content-Type: text/csv\r\n\r\n")
        for _ in range(48):
            sent["bytes"] += 65536
            yield b"x" * 65536

    with app_with(BENCHTRAIL_MAX_UPLOAD_MB="1") as app, TestClient(app) as c:
        r = c.post(f"/api/v1/projects/{slug}/runs", content=body(),
                   headers={"Authorization": f"Bearer {token}",
                            "Content-Type": "multipart/form-data; boundary=b"})
    assert r.status_code == 413, r.text
    assert r.json()["error"] == "PayloadTooLarge"
    # Refused while blocks still waited to be written: the writer stopped, the upload's folder is gone.
    assert list((Path(infra["BENCHTRAIL_DATA_DIR"]) / "tmp").glob("upload-*")) == []


def test_failed_authentications_are_limited_per_address(infra, admin_token) -> None:
    from fastapi.testclient import TestClient

    address = f"198.51.100.{uuid.uuid4().int % 250}-{uuid.uuid4().hex[:6]}"
    with app_with(BENCHTRAIL_RATE_LIMIT_FAILED_AUTH_PER_ADDRESS="5/minute") as app, \
            TestClient(app, client=(address, 40000)) as c:
        for i in range(5):
            r = c.get("/api/v1/projects", headers={"Authorization": f"Bearer wrong-{i}"})
            assert r.status_code == 401, (i, r.text)
        r = c.get("/api/v1/projects", headers={"Authorization": "Bearer wrong-again"})
        assert r.status_code == 429, r.text
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert r.json()["error"] == "TooManyRequests" and "failed authentications" in r.json()["detail"]
        # Even a valid token is refused from that address until the window passes ...
        assert c.get("/api/v1/projects", headers={"Authorization": f"Bearer {admin_token}"}).status_code == 429
        # ... while anonymous reads still work.
        assert c.get("/api/v1/projects").status_code == 200
    with TestClient(app, client=(address + "-other", 40000)) as other:
        assert other.get("/api/v1/projects", headers={"Authorization": f"Bearer {admin_token}"}).status_code == 200


def test_writes_are_limited_per_token_and_per_address(infra, make_project) -> None:
    from fastapi.testclient import TestClient

    slug, token = make_project(role="admin")
    _, token2 = make_project(role="admin")
    address = f"203.0.113.{uuid.uuid4().hex[:8]}"
    with app_with(BENCHTRAIL_RATE_LIMIT_WRITES_PER_TOKEN="3/minute",
                  BENCHTRAIL_RATE_LIMIT_WRITES_PER_ADDRESS="4/minute") as app, \
            TestClient(app, client=(address, 40000)) as c:
        auth = {"Authorization": f"Bearer {token}"}
        codes = [c.post(f"/api/v1/projects/{slug}/annotations", json={"title": f"a{i}", "agent_version": "1"}, headers=auth).status_code
                 for i in range(4)]
        assert codes == [201, 201, 201, 429], codes
        # Reads are not writes.
        assert c.get(f"/api/v1/projects/{slug}/annotations", headers=auth).status_code == 200
        # Another token from the same address has its own 3, but the address allows 4 writes in all
        # (3 counted so far: a write refused for its token is not counted against the address).
        r = c.post(f"/api/v1/projects/{slug}/annotations", json={"title": "b", "agent_version": "1"}, headers={"Authorization": f"Bearer {token2}"})
        assert r.status_code in (201, 403, 404), r.text  # token2 belongs to another project
        r = c.post(f"/api/v1/projects/{slug}/annotations", json={"title": "c", "agent_version": "1"}, headers={"Authorization": f"Bearer {token2}"})
        assert r.status_code == 429 and "from " in r.json()["detail"], r.text
        assert int(r.headers["retry-after"]) >= 1


def test_database_down_is_503_with_retry_after(infra, make_project, live_api) -> None:
    import httpx

    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    http = httpx.Client(timeout=30)
    with postgres_down(infra):
        for method, path, kwargs in (
                ("GET", f"/api/v1/projects/{slug}/runs", {}),
                ("POST", f"/api/v1/projects/{slug}/runs",
                 {"data": {"metadata": json.dumps({"files": [{"variant": "a"}]})},
                  "files": [("files", ("a.jtl", b"timeStamp,elapsed,success\n1,2,true\n", "text/csv"))]}),
                ("POST", f"/api/v1/projects/{slug}/annotations", {"json": {"title": "x"}})):
            r = http.request(method, live_api + path, headers=auth, **kwargs)
            assert r.status_code == 503, (path, r.status_code, r.text)
            assert r.headers["content-type"].startswith("application/json")
            assert int(r.headers["retry-after"]) >= 1
            assert r.json()["error"] == "ServiceUnavailable" and "database" in r.json()["detail"]
    r = http.get(f"{live_api}/api/v1/projects/{slug}/runs", headers=auth)
    assert r.status_code == 200, r.text


def test_cli_upload_rides_out_a_database_outage(infra, make_project, live_api, worker, scratch: Path) -> None:
    from sqlalchemy import select

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Project, Run

    slug, token = make_project()
    jtl = scratch / "base.jtl"
    rows = "\n".join(f"{1700000000000 + i * 10},{10 + i % 7},GET /a,200,true" for i in range(200))
    jtl.write_text("timeStamp,elapsed,label,responseCode,success\n" + rows + "\n")
    env = {**os.environ, "BENCHTRAIL_URL": live_api, "BENCHTRAIL_TOKEN": token}
    script = str(REPO / "infra/scripts/postgres.sh")
    subprocess.run([script, "stop", infra["_pg_dir"], infra["_pg_port"]], check=True)
    try:
        log = scratch / "cli.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([str(VENV_BIN / "benchtrail"), "upload", "--project", slug,
                                     "--variant", f"base={jtl}", "--wait", "--wait-timeout", "120",
                                     "--retry-timeout", "120", "--json"],
                                    env=env, stdout=subprocess.PIPE, stderr=out)
            # The CLI is waiting on 503s (it says so) before the database comes back.
            wait_until(lambda: log.read_text().count("waiting") >= 2, 60, "the CLI to report its retries")
            assert proc.poll() is None, log.read_text()
    finally:
        start_postgres(infra)
    stdout, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, (proc.returncode, stdout, log.read_text())
    printed = json.loads(stdout)
    assert printed["status"] == "completed"
    assert "503" in log.read_text() and "ServiceUnavailable" in log.read_text()
    with unit_of_work() as session:
        runs = session.scalars(select(Run).join(Project, Project.id == Run.project_id)
                               .where(Project.slug == slug)).all()
    assert [(r.slug, r.status) for r in runs] == [(printed["run"], "completed")]
    assert runs[0].idempotency_key and runs[0].idempotency_key.startswith("cli-")


def _own_api(name: str, argv: list[str], env: dict[str, str], logdir: Path) -> tuple[Process, str]:
    """An API server of this test's own (`argv` without --port), once it answers: (process, base URL)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    api = Process(name, [*argv, "--port", str(port)], {**env, "BENCHTRAIL_PUBLIC_URL": url}, logdir)
    try:
        wait_until(lambda: answers(f"{url}/api/health"), 120, "the API")
    except BaseException:
        api.stop()
        raise
    return api, url


def test_a_full_disk_is_503_with_retry_after_and_leaves_nothing(infra, make_project, logdir, scratch: Path) -> None:
    """The API's file writes fail (a 2 MB file-size limit on its process: each write past it fails like a
    full disk): an upload larger than that is answered 503 + Retry-After, never 400 or 500, and leaves no
    run, no raw file and no scratch file; a smaller upload on the same server is accepted."""
    import httpx
    from sqlalchemy import func, select

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Project, Run
    from tests.support.jtl import write_jtl

    slug, token = make_project()
    data, tmp = scratch / "data", scratch / "tmp"
    tmp.mkdir()
    api, url = _own_api("api-disk-full", ["prlimit", f"--fsize={2 << 20}", str(VENV_BIN / "uvicorn"),
                                          "benchtrail.app:create_app", "--factory"],
                        _env(infra, BENCHTRAIL_DATA_DIR=str(data), TMPDIR=str(tmp)), logdir)
    try:
        big = write_jtl(scratch / "big.jtl", seed=1, per_group=5_000)      # ~3.7 MB
        small = write_jtl(scratch / "small.jtl", seed=2, per_group=300)    # ~0.2 MB
        assert big.stat().st_size > 3 << 20 and small.stat().st_size < 1 << 20
        auth = {"Authorization": f"Bearer {token}"}
        meta = json.dumps({"files": [{"variant": "base"}]})
        http = httpx.Client(timeout=60)
        # Refused where the server writes the body (plain), or where the server decompresses it (gzip, 0.7 MB
        # sent): the disk's fault either way, never "a corrupt compressed file" nor "error parsing the body".
        for name, body in (("big.jtl", big.read_bytes()), ("big.jtl.gz", gzip.compress(big.read_bytes()))):
            r = http.post(f"{url}/api/v1/projects/{slug}/runs", headers=auth,
                          data={"metadata": meta}, files=[("files", (name, body, "application/octet-stream"))])
            assert r.status_code == 503, (name, r.text)
            assert int(r.headers["retry-after"]) >= 1
            assert r.json()["error"] == "ServiceUnavailable" and "storage" in r.json()["detail"]
        assert api.output().count("File too large") >= 2
        with unit_of_work() as session:
            runs = session.scalar(select(func.count()).select_from(Run).join(Project, Project.id == Run.project_id)
                                  .where(Project.slug == slug))
        assert runs == 0
        assert [p for p in data.rglob("*") if p.is_file()] == [] and list(tmp.iterdir()) == []

        r = http.post(f"{url}/api/v1/projects/{slug}/runs", headers=auth,
                      data={"metadata": meta}, files=[("files", ("small.jtl", small.read_bytes(), "text/csv"))])
        assert r.status_code == 202, r.text
        assert len([p for p in (data / "blobs").rglob("*") if p.is_file()]) == 1
    finally:
        api.stop()


def test_an_upload_is_written_once_on_the_data_disk_not_in_tmp(infra, make_project, logdir, scratch: Path) -> None:
    """`benchtrail-api` writes the bytes of an upload still arriving under BENCHTRAIL_DATA_DIR/tmp (TMPDIR
    unset), not in a /tmp that may be RAM: seen in the server's open files while the body is held mid-way;
    and it writes them once (the kernel's count of the bytes the process wrote), not spooled then copied."""
    import threading

    import httpx

    from tests.support.jtl import write_jtl

    slug, token = make_project()
    data = scratch / "data"
    env = _env(infra, BENCHTRAIL_DATA_DIR=str(data))
    env.pop("TMPDIR", None)
    api, url = _own_api("api-spool", [str(VENV_BIN / "benchtrail-api"), "--workers", "1"], env, logdir)
    try:
        jtl = write_jtl(scratch / "big.jtl", seed=4, per_group=5_000).read_bytes()
        boundary = "bt-spool-boundary"
        head = (f'--{boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n'
                f'{json.dumps({"files": [{"variant": "base"}]})}\r\n--{boundary}\r\nContent-Disposition: form-data; '
                f'name="files"; filename="big.jtl"\r\nContent-Type: text/csv\r\n\r\n').encode()
        gate, replies = threading.Event(), []

        def body() -> Iterator[bytes]:
            yield head + jtl[: 2 << 20]        # past the first 1 MiB block written
            gate.wait(60)
            yield jtl[2 << 20:] + f"\r\n--{boundary}--\r\n".encode()

        def post() -> None:
            with httpx.Client(timeout=90) as http:
                replies.append(http.post(f"{url}/api/v1/projects/{slug}/runs", content=body(), headers={
                    "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"}))

        def written() -> int:
            return int(next(line.split()[1] for line in Path(f"/proc/{api.proc.pid}/io").read_text().splitlines()
                            if line.startswith("wchar:")))

        before = written()
        sender = threading.Thread(target=post)
        sender.start()

        def spooled() -> list[str]:
            fds = Path(f"/proc/{api.proc.pid}/fd")
            return [t for t in (os.readlink(fd) for fd in fds.iterdir() if fd.is_symlink())
                    if t.startswith(str(data / "tmp"))]

        try:
            assert wait_until(spooled, 30, "the upload to be spooled under the data folder")
        finally:
            gate.set()
            sender.join(90)
        assert replies and replies[0].status_code == 202, replies and replies[0].text
        assert len(jtl) <= written() - before < 1.2 * len(jtl), (written() - before, len(jtl))
    finally:
        api.stop()


def test_the_worker_keeps_its_temporary_files_on_the_data_disk(infra, worker) -> None:
    """The worker's temporary files (a recoded legacy-encoding JTL) go under BENCHTRAIL_DATA_DIR/tmp too."""
    line = next(json.loads(x) for x in worker.output().splitlines() if '"temporary files"' in x)
    assert line["folder"] == str(Path(infra["BENCHTRAIL_DATA_DIR"]) / "tmp")

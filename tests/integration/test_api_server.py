"""The production server, `benchtrail-api`, with two worker processes: connections are spread over
both, a killed worker is replaced by one listening again, and a second server on the same port is
refused. With three, under load, its processes together hold no more database connections than
BENCHTRAIL_API_DB_CONNECTIONS."""

from __future__ import annotations

import signal
import socket
import subprocess
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import psutil
from sqlalchemy.engine import make_url

from infra.localstack import VENV_BIN, Process, answers, free_port, wait_until
from tests.support.env import stack_env as _env

CONNECTIONS = 32


def _server(infra, logdir, port: int, name: str, workers: int = 2, **env: str) -> Process:
    return Process(f"{name}-{uuid.uuid4().hex[:6]}", [str(VENV_BIN / "benchtrail-api"), "--port", str(port),
                                                      "--workers", str(workers)],
                   _env(infra, BENCHTRAIL_PUBLIC_URL=f"http://127.0.0.1:{port}", **env), logdir)


def _served_keep_alive(port: int) -> socket.socket:
    """A connection that has had one request answered (so a worker accepted it) and stays open."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the connection"
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    return sock


def _listening_workers(proc: Process, port: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(proc.proc.pid).children(recursive=True)
            if any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in p.net_connections("tcp"))]


def _up(port: int) -> bool:
    return answers(f"http://127.0.0.1:{port}/api/health")


def test_keep_alive_connections_are_spread_over_the_worker_processes(infra, logdir):
    """Connections opened one after another, each answered, all kept open (a proxy's pool, a load
    test): each worker process holds a share of them. With one socket shared by the workers, the one
    that wakes first takes them: measured, all 32 on one process in 4 of 4 tries."""
    port = free_port()
    proc = _server(infra, logdir, port, "api-spread")
    kept: list[socket.socket] = []
    try:
        wait_until(lambda: len(_listening_workers(proc, port)) == 2, 300, "both workers listening")
        workers = _listening_workers(proc, port)
        held = Counter({w.pid: 0 for w in workers})
        for _ in range(CONNECTIONS):
            kept.append(_served_keep_alive(port))
            # Its holder looked up at once: the server closes a connection idle for 5 s (uvicorn's keep-alive
            # timeout), and on a busy machine 32 connections, each answered, have taken longer than that.
            client = kept[-1].getsockname()[1]
            [holder] = [w.pid for w in workers for c in w.net_connections("tcp")
                        if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port
                        and c.raddr and c.raddr.port == client]
            held[holder] += 1
        # Spread by a hash of the addresses: fewer than 4 of 32 on either is a 1-in-380,000 chance.
        assert min(held.values()) >= 4, held
        for s in kept:
            s.close()

        # A worker killed: the process manager starts another, which listens on a socket of its own.
        workers[0].kill()
        wait_until(lambda: len({w.pid for w in _listening_workers(proc, port)} - {workers[0].pid}) == 2, 120,
                   "a replacement worker listening")
        assert all(_up(port) for _ in range(20))
    finally:
        for s in kept:
            s.close()
        proc.stop(signal.SIGTERM)


def test_a_second_server_on_the_same_port_is_refused(infra, logdir):
    """Workers listen with SO_REUSEPORT, which would let another server of the same user share their
    port silently: a second `benchtrail-api` on a port in use stops with an error instead."""
    port = free_port()
    first = _server(infra, logdir, port, "api-first")
    try:
        wait_until(lambda: _up(port), 300, "the API")
        second = _server(infra, logdir, port, "api-second")
        wait_until(lambda: not second.alive(), 120, "the second server to stop")
        assert second.proc.returncode != 0
        assert "Address already in use" in second.output()
        assert _up(port)
    finally:
        first.stop(signal.SIGTERM)


def test_its_processes_hold_no_more_database_connections_than_their_share(infra, logdir, admin_token):
    """BENCHTRAIL_API_DB_CONNECTIONS (9 here) bounds the connections of all the server's processes
    together (3: a share of 3 each, one for reads, one for writes, one for the event loop's reads). The
    database enforces the bound: the server logs in as a role of its own limited to 9 connections, and
    a connection refused answers 503. 32 clients at once then read kept answers (the project), answers
    not kept (runs lists at 200 different limits) and write (projects created): every answer is 2xx.
    Without the share, each process opened up to 31 connections: 503 on most requests."""
    role = f"api_share_{uuid.uuid4().hex[:6]}"
    subprocess.run(["psql", "-h", "127.0.0.1", "-p", infra["_pg_port"], "-U", "postgres", "-d", "postgres",
                    "-v", "ON_ERROR_STOP=1", "-qc", f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 9 IN ROLE benchtrail"],
                   check=True)
    database_url = make_url(infra["BENCHTRAIL_DATABASE_URL"]).set(username=role).render_as_string(hide_password=False)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _server(infra, logdir, port, "api-share", workers=3, BENCHTRAIL_DATABASE_URL=database_url,
                   BENCHTRAIL_API_DB_CONNECTIONS="9")
    auth = {"Authorization": f"Bearer {admin_token}"}
    try:
        wait_until(lambda: _up(port), 300, "the API")
        slug = f"share-{uuid.uuid4().hex[:8]}"
        with httpx.Client() as http:
            assert http.post(f"{url}/api/v1/projects", json={"slug": slug, "name": slug}, headers=auth).status_code == 201

        def request(client: httpx.Client, i: int) -> tuple[str, int]:
            kind = i % 3
            if kind == 0:
                answer = client.get(f"/api/v1/projects/{slug}")
            elif kind == 1:
                answer = client.get(f"/api/v1/projects/{slug}/runs", params={"limit": 1 + i % 200})
            else:
                answer = client.post("/api/v1/projects", json={"slug": f"{slug}-{i}", "name": f"{slug} {i}"})
            return ("read kept", "read", "write")[kind], answer.status_code

        def client_work(c: int) -> list[tuple[str, int]]:
            with httpx.Client(base_url=url, headers=auth, timeout=60) as client:
                return [request(client, c * 30 + i) for i in range(30)]

        with ThreadPoolExecutor(CONNECTIONS) as pool:
            answers = [a for done in pool.map(client_work, range(CONNECTIONS)) for a in done]
        assert len(answers) == CONNECTIONS * 30
        refused = Counter(a for a in answers if not 200 <= a[1] < 300)
        assert not refused, refused
        assert f"too many connections for role \"{role}\"" not in proc.output()
    finally:
        proc.stop(signal.SIGTERM)
    assert '"at_most": 9' in proc.output() and '"database_allows": 9' in proc.output(), proc.output()[-3000:]

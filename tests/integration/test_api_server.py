"""The production server, `benchtrail-api`, with two worker processes: connections are spread over
both, a killed worker is replaced by one listening again, and a second server on the same port is
refused."""

from __future__ import annotations

import signal
import socket
import uuid
from collections import Counter

import httpx
import psutil

from infra.localstack import VENV_BIN, Process, free_port, wait_until
from tests.integration.conftest import _env

CONNECTIONS = 32


def _server(infra, logdir, port: int, name: str) -> Process:
    return Process(f"{name}-{uuid.uuid4().hex[:6]}", [str(VENV_BIN / "benchtrail-api"), "--port", str(port),
                                                      "--workers", "2"],
                   _env(infra, BENCHTRAIL_PUBLIC_URL=f"http://127.0.0.1:{port}"), logdir)


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
    return httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5).status_code == 200


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
        kept = [_served_keep_alive(port) for _ in range(CONNECTIONS)]
        clients = {s.getsockname()[1] for s in kept}
        held = Counter({w.pid: 0 for w in workers})
        for w in workers:
            held[w.pid] += sum(1 for c in w.net_connections("tcp")
                               if c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port
                               and c.raddr and c.raddr.port in clients)
        assert sum(held.values()) == CONNECTIONS, held
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

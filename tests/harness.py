"""Ephemeral infrastructure for tests: a real PostgreSQL and a real Redis on free loopback ports,
the schema built by the Alembic migrations, and real Celery worker processes."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate: Callable[[], object], timeout: float, what: str, interval: float = 0.05) -> object:
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # the condition is not met yet
            last_exc = exc
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what}" + (f" (last error: {last_exc})" if last_exc else ""))


class Postgres:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bt-pg-"))
        self.port = free_port()

    def start(self) -> "Postgres":
        # --test: fsync/synchronous_commit/full_page_writes off and trust authentication. TEST ONLY
        # (fast, unsafe on power loss, open to any local user); `make up` runs durable with passwords.
        subprocess.run([str(REPO / "infra/scripts/postgres.sh"), "start", str(self.dir), str(self.port), "--test"],
                       check=True)
        subprocess.run([str(REPO / "infra/scripts/createdb.sh"), str(self.port), "benchtrail"], check=True)
        return self

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://benchtrail@127.0.0.1:{self.port}/benchtrail"

    def stop(self) -> None:
        subprocess.run([str(REPO / "infra/scripts/postgres.sh"), "stop", str(self.dir), str(self.port)], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


class Redis:
    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="bt-redis-"))
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "Redis":
        import redis

        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.dir), "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=self.port)
        wait_until(client.ping, 10, "redis to answer PING")
        client.close()
        return self

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def migrate(database_url: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config(str(REPO / "alembic.ini"))
    cfg.attributes["database_url"] = database_url
    command.upgrade(cfg, "head")


class Process:
    """A child process (worker, beat, API) with its output in a log file, stopped with SIGTERM."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], logdir: Path) -> None:
        self.name = name
        self.log = logdir / f"{name}.log"
        self._fh = self.log.open("wb")
        self.proc = subprocess.Popen(argv, env=env, stdout=self._fh, stderr=subprocess.STDOUT, cwd=REPO,
                                     start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._fh.close()


def celery_worker(name: str, env: dict[str, str], logdir: Path, queues: str = "ingest,analysis,default",
                  concurrency: int = 2) -> Process:
    # Supervised as in `make up`: a worker that a broker fault ends is started again.
    proc = Process(name, [str(VENV_BIN / "benchtrail-supervise"), str(VENV_BIN / "celery"), "-A",
                          "benchtrail_worker.app", "--quiet", "worker", "-Q", queues,
                          "-c", str(concurrency), "-n", f"{name}@%h", "--loglevel", "INFO",
                          "--without-gossip", "--without-mingle", "--without-heartbeat"], env, logdir)
    try:
        # 180 s: on the shared 2-core machine under load a worker has taken over 60 s to start.
        wait_until(lambda: "ready" in proc.output() or not proc.alive(), 180, f"celery worker {name} to be ready")
    except TimeoutError:
        proc.stop()   # never leave a worker behind (it would keep retrying a broker that is gone)
        raise
    if not proc.alive():
        raise RuntimeError(f"worker {name} died:\n{proc.output()}")
    return proc

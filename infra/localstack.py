"""The pieces of a local Benchtrail stack, shared by `make up` (infra/scripts/stack.py), the test
harness (tests/conftest.py and the integration tests) and the benchmarks (bench/): PostgreSQL and Redis
on loopback ports, the Alembic migrations, child processes with a log file, supervised Celery processes
(`benchtrail-supervise`), polling with a deadline and free ports.

Two PostgreSQL modes, chosen by the caller and never mixed up:
- durable (`start_postgres(..., password_file=...)`, what `make up` runs): fsync, synchronous_commit and
  full_page_writes on, scram-sha-256 passwords;
- unsafe (`start_postgres(..., unsafe=True)`, only `Postgres` below: tests, `stack.py ephemeral`,
  benchmarks): those settings off and trust authentication, fast and throw-away. A power loss can
  corrupt such a cluster: never for real data.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
POSTGRES_SH = REPO / "infra" / "scripts" / "postgres.sh"
CREATEDB_SH = REPO / "infra" / "scripts" / "createdb.sh"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_port_run(n: int) -> int:
    """The first of n consecutive free loopback ports (for start scripts that take a base port)."""
    for base in range(21000 + os.getpid() % 500 * 20, 60000, 11):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                s.bind(("127.0.0.1", p))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports")


def answers(url: str, timeout: float = 5) -> bool:
    """Whether a GET of `url` is answered 200: for polling a server until it is up. urllib, not httpx, whose request
    functions build a client, and an SSL context with it, for every call (25 ms of CPU, 50 ms apart)."""
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        return bool(answer.status == 200)


def wait_until(predicate: Callable[[], object], timeout: float, what: str, interval: float = 0.05) -> object:
    """Poll `predicate` until it returns something truthy (returned) or `timeout` seconds pass."""
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


# --------------------------------------------------------------------------------------- PostgreSQL

def start_postgres(data_dir: Path, port: int, *, unsafe: bool = False, password_file: Path | None = None) -> None:
    """Start (creating if needed) a cluster in `data_dir`: durable with a superuser password file,
    or `unsafe` (tests and throw-away stacks only; see the module docstring)."""
    if unsafe == (password_file is not None):
        raise ValueError("start_postgres: give either unsafe=True (tests) or a password_file (durable), not both")
    mode = ["--test"] if unsafe else ["--password-file", str(password_file)]
    subprocess.run([str(POSTGRES_SH), "start", str(data_dir), str(port), *mode], check=True)


def stop_postgres(data_dir: Path, port: int) -> None:
    subprocess.run([str(POSTGRES_SH), "stop", str(data_dir), str(port)], check=False)


def create_database(port: int, name: str, password_file: Path | None = None,
                    superuser_password_file: Path | None = None) -> None:
    argv = [str(CREATEDB_SH), str(port), name]
    if password_file is not None:
        argv += [str(password_file), str(superuser_password_file or "")]
    subprocess.run(argv, check=True)


class Postgres:
    """A throw-away PostgreSQL on a free port in a temp folder, unsafe settings (tests, benchmarks)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bt-pg-"))
        self.port = free_port()

    def start(self) -> Postgres:
        start_postgres(self.dir, self.port, unsafe=True)
        create_database(self.port, "benchtrail")
        return self

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://benchtrail@127.0.0.1:{self.port}/benchtrail"

    def stop(self) -> None:
        stop_postgres(self.dir, self.port)
        shutil.rmtree(self.dir, ignore_errors=True)


def migrate(database_url: str) -> None:
    """The schema, by the Alembic migrations (the only source of schema)."""
    from alembic import command
    from alembic.config import Config

    cfg = Config(str(REPO / "alembic.ini"))
    cfg.attributes["database_url"] = database_url
    command.upgrade(cfg, "head")


# -------------------------------------------------------------------------------------------- Redis

class Redis:
    """A throw-away Redis on a free (or given) port, no persistence (tests, benchmarks)."""

    def __init__(self, port: int | None = None, password: str | None = None) -> None:
        self.port = port or free_port()
        self.password = password   # requirepass, as in `make up` and compose
        self.dir = Path(tempfile.mkdtemp(prefix="bt-redis-"))
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Redis:
        import redis

        self.proc = subprocess.Popen(
            ["redis-server", *(["-"] if self.password else []), "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.dir), "--loglevel", "warning"],
            stdin=subprocess.PIPE if self.password else None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.password:  # from stdin ("-" = config file on stdin), never on the command line
            assert self.proc.stdin is not None
            self.proc.stdin.write(f"requirepass {self.password}\n".encode())
            self.proc.stdin.close()
        client = redis.Redis(host="127.0.0.1", port=self.port, password=self.password)
        wait_until(client.ping, 10, "redis to answer PING")
        client.close()
        return self

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def shutdown_redis(port: int) -> None:
    """Stop whichever throw-away Redis answers on `port` without saving (tests take the broker down this
    way, and start a new one on the same port with `Redis(port=...)`), and remove its folder."""
    port_s = str(port)
    folder = subprocess.run(["redis-cli", "-p", port_s, "config", "get", "dir"], capture_output=True, text=True,
                            check=False).stdout.split()
    subprocess.run(["redis-cli", "-p", port_s, "shutdown", "nosave"], capture_output=True, check=False)
    if len(folder) == 2 and Path(folder[1]).name.startswith("bt-redis-"):
        shutil.rmtree(folder[1], ignore_errors=True)


# ---------------------------------------------------------------------------------------- processes

class Process:
    """A child process (worker, beat, API) in its own session with its output in a log file, stopped
    with SIGTERM to its process group."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], logdir: Path, cwd: Path = REPO) -> None:
        self.name = name
        self.log = logdir / f"{name}.log"
        self._fh = self.log.open("wb")
        self.proc = subprocess.Popen(argv, env=env, stdout=self._fh, stderr=subprocess.STDOUT, cwd=cwd,
                                     start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
        self.signal(sig)
        self.wait_stopped(timeout)

    def signal(self, sig: int = signal.SIGTERM) -> None:
        """Sends `sig` to the process group, if the process still runs."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)

    def wait_stopped(self, timeout: float = 15) -> None:
        """Waits up to `timeout` seconds for the process to end, then kills its group."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        self._fh.close()


def stop_all(processes: Iterable[Process], timeout: float = 15) -> None:
    """Stops `processes` together: each is asked to stop, then each is waited for, so that their shutdowns (a Celery
    worker's takes about a second) overlap instead of adding up."""
    processes = list(processes)
    for proc in processes:
        proc.signal()
    for proc in processes:
        proc.wait_stopped(timeout)


def celery_command(bin_dir: Path, *args: str, app: str = "benchtrail_worker.app") -> list[str]:
    """A Celery process (worker, beat, runner) under `benchtrail-supervise`, which starts it again when
    a broker fault ends it; no banners, JSON log lines only."""
    return [str(bin_dir / "benchtrail-supervise"), str(bin_dir / "celery"), "-A", app, "--quiet", *args]


def beat_command(bin_dir: Path, schedule: Path, *, supervised: bool = True) -> list[str]:
    """Beat, on the worker's configuration without its tasks (`benchtrail_worker.beat`), keeping its schedule's state
    in `schedule`; `supervised=False`: the bare Celery process (tests that stop and start it themselves)."""
    args = ["beat", "-s", str(schedule), "--loglevel", "INFO"]
    command = celery_command(bin_dir, *args, app="benchtrail_worker.beat")
    return command if supervised else command[1:]


def worker_args(name: str, queues: str, concurrency: int) -> list[str]:
    return ["worker", "-Q", queues, "-c", str(concurrency), "-n", f"{name}@%h", "--loglevel", "INFO"]


def celery_worker(name: str, env: dict[str, str], logdir: Path, queues: str = "ingest,analysis,default",
                  concurrency: int = 2, wrapper: tuple[str, ...] = ()) -> Process:
    """A supervised Celery worker as `make up` starts it, returned once it is ready. `wrapper`: a
    command that execs the worker (e.g. `prlimit --fsize=N`, in tests)."""
    # A runner (queues runner.<pool>) is its own app, as on a separate load host.
    app = "benchtrail_runner.app" if queues.startswith("runner.") else "benchtrail_worker.app"
    proc = Process(name, [*wrapper, *celery_command(VENV_BIN, *worker_args(name, queues, concurrency),
                                                    "--without-gossip", "--without-mingle", "--without-heartbeat",
                                                    app=app)],
                   env, logdir)
    try:
        wait_until(lambda: "ready" in proc.output() or not proc.alive(), 180, f"celery worker {name} to be ready")
    except BaseException:  # our deadline, or the test's (pytest-timeout), or ^C
        proc.stop()  # never leave a worker behind: it would keep writing into the next session's log
        raise
    if not proc.alive():
        raise RuntimeError(f"worker {name} died:\n{proc.output()}")
    return proc

"""Fixtures for tests that need the API over real HTTP, runners, beat and real load targets."""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from infra.localstack import REPO, VENV_BIN, Process, answers, beat_command, celery_worker, free_port, stop_all, wait_until
from tests.support.env import SHARED_RUNNER, SHARED_RUNNER_IDLE_POOL, TOOLS
from tests.support.env import stack_env as _env
from tests.support.webhooks import Receiver

@pytest.fixture(scope="session")
def live_api(infra: dict[str, str], logdir: Path) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = Process("api", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory", "--host",
                           "127.0.0.1", "--port", str(port)], _env(infra, BENCHTRAIL_PUBLIC_URL=url), logdir)
    wait_until(lambda: answers(f"{url}/api/health"), 120, "the API")
    yield url
    proc.stop()


@pytest.fixture(scope="session")
def runner_token(infra: dict[str, str]) -> str:
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.projects.service import create_token

    with unit_of_work() as session:
        return create_token(session, project=None, name="test-runner", role="runner").token


@pytest.fixture(scope="session")
def start_runner(infra, live_api, runner_token, logdir) -> Iterator[Callable[..., Process]]:  # type: ignore[no-untyped-def]
    """Factory: a runner (Celery worker on queue runner.<pool>) that knows only the broker, the API URL
    and its token. Stopped at the end of the session unless a test stopped it."""
    started: list[Process] = []

    def start(pool: str, name: str, api_url: str | None = None, **extra: str) -> Process:
        env = _env(infra, BENCHTRAIL_API_URL=api_url or live_api, BENCHTRAIL_RUNNER_TOKEN=runner_token,
                   BENCHTRAIL_RUNNER_POOLS=pool, BENCHTRAIL_RUNNER_NAME=name,
                   BENCHTRAIL_DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:1/none", **extra)
        proc = celery_worker(name, env, logdir, queues=f"runner.{pool}", concurrency=1)
        started.append(proc)
        return proc

    yield start
    stop_all(started)


@pytest.fixture(scope="session")
def shared_runner(infra, live_api, runner_token, logdir) -> Iterator[Process]:  # type: ignore[no-untyped-def]
    """The test process's one long-lived runner: it serves the pool of each test that asks for
    `runner_pool` (a queue added to it for that test alone), instead of a runner started for every test."""
    env = _env(infra, BENCHTRAIL_API_URL=live_api, BENCHTRAIL_RUNNER_TOKEN=runner_token,
               BENCHTRAIL_RUNNER_POOLS=SHARED_RUNNER_IDLE_POOL, BENCHTRAIL_RUNNER_NAME=SHARED_RUNNER,
               BENCHTRAIL_DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:1/none")
    proc = celery_worker(SHARED_RUNNER, env, logdir, queues=f"runner.{SHARED_RUNNER_IDLE_POOL}", concurrency=1)
    yield proc
    proc.stop()


@pytest.fixture()
def runner_pool(shared_runner: Process, infra: dict[str, str]) -> Iterator[str]:
    """A pool of this test's own, served by the test process's runner (`shared_runner`, named
    SHARED_RUNNER on the runs it executes): plans of the test name it as their `pool`."""
    from celery import Celery

    pool = f"t-{uuid.uuid4().hex[:10]}"
    queue, node = f"runner.{pool}", f"{SHARED_RUNNER}@{socket.gethostname()}"
    app = Celery("runner-pool", broker=infra["BENCHTRAIL_REDIS_URL"])
    # A connection of its own each time: the process-wide pool (kombu.pools) may hold one opened before a test
    # restarted Redis, dead since, and the broadcast would fail on it ("Connection closed by server", seen once).
    # Asked again while nobody answers: the runner itself takes a few seconds to reconnect after such a restart.
    def taken() -> list[dict]:
        with app.connection_for_write() as conn:
            return app.control.add_consumer(queue, destination=[node], reply=True, timeout=10, connection=conn)

    replies = wait_until(taken, 90, f"the runner to take {queue}", interval=0)
    assert replies and all("ok" in r[node] for r in replies), f"the runner did not take {queue}: {replies}"
    yield pool
    with app.connection_for_write() as conn:
        app.control.cancel_consumer(queue, destination=[node], reply=True, timeout=30, connection=conn)


@pytest.fixture()
def beat(infra, worker, logdir, tmp_path_factory, request) -> Iterator[Process]:  # type: ignore[no-untyped-def]
    """Beat for the test that needs one, and only while it runs (a start is under a CPU-second): its sweeps every
    2 s and schedules cover the whole database, so beside the other tests of this process they would race
    their own sweeps and checks."""
    schedule = tmp_path_factory.mktemp("beat") / "schedule"
    proc = Process(f"beat-{request.node.originalname}", beat_command(VENV_BIN, schedule, supervised=False),
                   _env(infra), logdir)
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def go_target(logdir: Path) -> Iterator[str]:
    binary = TOOLS / "bin" / "benchtrail-demo-target"
    assert binary.exists(), f"{binary} is missing: run infra/tools/install.sh"
    port = free_port()
    proc = Process("go-target", [str(binary), "-addr", f"127.0.0.1:{port}"], dict(os.environ), logdir)
    url = f"http://127.0.0.1:{port}"
    wait_until(lambda: answers(f"{url}/ok", timeout=1), 15, "the Go target")
    yield url
    proc.stop()


# Seconds of start-java.sh's warm-up (hey on both endpoints of both services) given to every session's `java_demo`;
# `warm_java_demo` adds the rest of start-java.sh's default.
JAVA_DEMO_WARMUP_S = 5
START_JAVA_WARMUP_S = 20   # DEMO_WARMUP_S's default in infra/demo/start-java.sh


@pytest.fixture(scope="session")
def _java_demo_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """How infra/demo/start-java.sh and stop-java.sh find this session's Java demo: its ports and run folder."""
    return {**os.environ, "DEMO_BASELINE_PORT": str(free_port()), "DEMO_AGENT_PORT": str(free_port()),
            "DEMO_OTLP_PORT": os.environ.setdefault("BENCHTRAIL_TEST_OTLP_PORT", str(free_port())),
            "BENCHTRAIL_TOOLS_DIR": str(TOOLS), "DEMO_RUN_DIR": str(tmp_path_factory.mktemp("demo-java"))}


@pytest.fixture(scope="session")
def java_demo(_java_demo_env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """The Java demo service twice: baseline without an agent, agent with the OpenTelemetry agent
    (exporting its spans to the demo's OTLP sink, at java_demo_sink). Warmed up for JAVA_DEMO_WARMUP_S seconds,
    not START_JAVA_WARMUP_S (20: about 40 CPU-seconds, both cores busy): enough for the tests that profile it or
    load it with JMeter (JIT compilation was 46 CPU-ms per 1,000 requests of the agent's profile after 5 s, 142 with
    none); a test that measures its timings asks for `warm_java_demo`."""
    env = {**_java_demo_env, "DEMO_WARMUP_S": str(JAVA_DEMO_WARMUP_S)}
    subprocess.run([str(REPO / "infra/demo/start-java.sh")], env=env, check=True)
    yield f"http://127.0.0.1:{env['DEMO_BASELINE_PORT']}", f"http://127.0.0.1:{env['DEMO_AGENT_PORT']}"
    subprocess.run([str(REPO / "infra/demo/stop-java.sh")], env=env, check=False)


@pytest.fixture(scope="session")
def warm_java_demo(java_demo: tuple[str, str], _java_demo_env: dict[str, str]) -> tuple[str, str]:
    """`java_demo`, warmed up as long in all as `make up` and start-java.sh warm every service they start."""
    subprocess.run([str(REPO / "infra/demo/start-java.sh"), "warm"],
                   env={**_java_demo_env, "DEMO_WARMUP_S": str(START_JAVA_WARMUP_S - JAVA_DEMO_WARMUP_S)}, check=True)
    return java_demo


@pytest.fixture(scope="session")
def java_demo_sink(java_demo: tuple[str, str]) -> str:
    """The OTLP/HTTP trace sink the demo agent exports to (GET <url>/v1/traces/stats)."""
    return f"http://127.0.0.1:{os.environ['BENCHTRAIL_TEST_OTLP_PORT']}"


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on a free loopback port (/slack answers 503 the first time)."""
    r = Receiver()
    yield r
    r.server.shutdown()

"""Fixtures shared by every test. Infrastructure starts lazily: pure unit tests start nothing."""

from __future__ import annotations

import os
import resource
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.localstack import REPO, Postgres, Process, Redis, celery_worker, migrate, shutdown_redis

# BENCHTRAIL_SHARED_DIR: where shared/ is when it is not beside the repository (a git worktree).
SHARED_FIXTURES = Path(os.environ.get("BENCHTRAIL_SHARED_DIR") or REPO.parent / "shared") / "fixtures"


@pytest.fixture(scope="session")
def real_fixtures() -> Path:
    path = SHARED_FIXTURES / "real"
    assert path.is_dir(), f"expected the shared fixtures at {path}"
    return path


@pytest.fixture(scope="session")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """PostgreSQL + Redis + migrated schema; sets BENCHTRAIL_* for this process and its children."""
    pg, rd = Postgres().start(), Redis().start()
    data_dir = tmp_path_factory.mktemp("data")
    env = {
        "BENCHTRAIL_ENV": "test",
        "BENCHTRAIL_DATABASE_URL": pg.url,
        "BENCHTRAIL_REDIS_URL": rd.url,
        "BENCHTRAIL_DATA_DIR": str(data_dir),
        "BENCHTRAIL_PUBLIC_URL": "http://testserver",
        "BENCHTRAIL_LOG_JSON": "true",
        # Short enough that a vanished runner is noticed within a test, long enough for 1 s reports.
        "BENCHTRAIL_RUN_HEARTBEAT_TIMEOUT_S": "5",
        "BENCHTRAIL_SWEEPER_INTERVAL_S": "2",
        # The suite's heavy writers (fuzz, e2e) must not be throttled; tests of the limits lower them.
        "BENCHTRAIL_RATE_LIMIT_WRITES_PER_TOKEN": "1000000/minute",
        "BENCHTRAIL_RATE_LIMIT_WRITES_PER_ADDRESS": "1000000/minute",
        "BENCHTRAIL_RATE_LIMIT_FAILED_AUTH_PER_ADDRESS": "100000/minute",
        # Plans may name the hand-written JMX files kept with the tests.
        "BENCHTRAIL_JMX_DIRS": str(REPO / "tests" / "fixtures"),
        # Webhook receivers in tests listen on loopback (tests of the allow-list pass their own).
        "BENCHTRAIL_WEBHOOK_ALLOWLIST": "127.0.0.1:*",
    }
    os.environ.update(env)
    _reset_caches()
    migrate(pg.url)
    try:
        yield {**env, "_pg_dir": str(pg.dir), "_pg_port": str(pg.port), "_redis_port": str(rd.port)}
    finally:
        rd.stop()
        # Tests that take Redis down start a new one on the same port: stop whichever is there.
        shutdown_redis(rd.port)
        pg.stop()


def _reset_caches() -> None:
    from benchtrail import jobs, storage
    from benchtrail.config import get_settings
    from benchtrail.db import connection_share, get_engine, get_sessionmaker

    get_settings.cache_clear()
    connection_share.cache_clear()
    storage.get_store.cache_clear()
    get_engine.cache_clear()
    get_sessionmaker.cache_clear()
    jobs.producer.cache_clear()


@pytest.fixture(scope="session")
def logdir(worker_id: str) -> Path:
    """This test process's log folder: under pytest-xdist each process (gw0, gw1, ...) has its own, so
    processes of the same name (`worker`, `api`) never write into one file."""
    path = REPO / "artifacts" / "logs" / worker_id
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def worker(infra: dict[str, str], logdir: Path) -> Iterator[Process]:
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")}}
    proc = celery_worker("worker", env, logdir)
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def app(infra: dict[str, str]):  # type: ignore[no-untyped-def]
    from benchtrail.app import create_app

    return create_app()


@pytest.fixture()
def client(app):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="session")
def admin_token(infra: dict[str, str]) -> str:
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.projects.service import create_token

    with unit_of_work() as session:
        return create_token(session, project=None, name="test-admin", role="admin").token


@pytest.fixture()
def make_project(client, admin_token):  # type: ignore[no-untyped-def]
    """Factory: a fresh project (unique slug) and a token of the requested role on it."""

    def make(public: bool = True, role: str = "uploader") -> tuple[str, str]:
        slug = f"p-{uuid.uuid4().hex[:10]}"
        r = client.post("/api/v1/projects", json={"slug": slug, "is_public": public},
                        headers={"Authorization": f"Bearer {admin_token}"})
        assert r.status_code == 201, r.text
        r = client.post(f"/api/v1/projects/{slug}/tokens", json={"name": f"{role}-token", "role": role},
                        headers={"Authorization": f"Bearer {admin_token}"})
        assert r.status_code == 201, r.text
        return slug, r.json()["token"]

    return make


@pytest.fixture()
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="bt-test-") as d:
        yield Path(d)


LOAD_GROUP = "load"
# The Playwright suite (a stack and Chromium), then, in the same process, the tests that assert on measured timings
# (`timing`): so the suite never runs beside them, and they never beside each other.
HEAVY_GROUP = "heavy"
# The compose stack on a Docker engine (tests/integration/test_containers.py), in a process of its own.
CONTAINERS_GROUP = "containers"


def _shares_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


@pytest.hookimpl(tryfirst=True)   # before pytest-xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """How pytest-xdist (`--dist loadgroup`) shares the tests out:

    - Tests that run real load tools (marked `slow`, and every runner test) form one group, run one after another by
      one test process, so that no two load tests ever share the cores. Those that assert on measured rates,
      latencies or CPU (`timing`) run in the heavy group instead, after the Playwright suite, in its process: with
      8 repetitions beside the Playwright suite, the demo's 10-span overhead interval reached below 0 in 2 of 3
      runs. The compose stack runs in a process of its own: behind the Playwright suite in one chain, it made that
      chain the longest of the session by about 300 s (issue 41).
    - A module's tests that share a module-scoped fixture (a stack, an S3 server, a loaded demo, an installed
      runner) form a group of their own, so the fixture is made once, not once per test process.
    - The longest work is handed out first, so that no process starts a long one when the others are nearly done:
      the load group, the heavy group, the compose stack, the benches' smoke runs (make test-python passes
      --no-loadscope-reorder, which would put the groups with the most tests first)."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here / "unit" / "runner") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("timing"):
            item.add_marker(pytest.mark.xdist_group(HEAVY_GROUP))
        if item.get_closest_marker("xdist_group"):
            continue
        if item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.xdist_group(LOAD_GROUP))
        elif _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(str(item.path.relative_to(here))))

    def rank(item: pytest.Item) -> int:
        group = item.get_closest_marker("xdist_group")
        name = group.args[0] if group is not None and group.args else None
        if name == LOAD_GROUP:
            return 0
        if name == HEAVY_GROUP:
            return 2 if item.get_closest_marker("timing") else 1
        if name == CONTAINERS_GROUP:
            return 3
        return 4 if item.path.is_relative_to(here / "bench") else 5

    items.sort(key=rank)


def _timeline() -> Path:
    return REPO / "artifacts" / "logs" / os.environ.get("PYTEST_XDIST_WORKER", "master") / "timeline.tsv"


def _machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of every core since boot, from /proc/stat."""
    fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]   # idle + iowait
    return sum(fields) - idle, sum(fields)


def pytest_sessionstart(session: pytest.Session) -> None:
    _timeline().unlink(missing_ok=True)
    session.config.stash[_CPU_AT_START] = _machine_cpu()


_CPU_AT_START = pytest.StashKey[tuple[float, float]]()


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    """How busy the machine's cores were over the session: a suite that keeps them near 100 % can only get faster
    by doing less work, one that leaves them idle by arranging its work better (issue 41)."""
    if os.environ.get("PYTEST_XDIST_WORKER") or _CPU_AT_START not in config.stash:
        return
    (busy0, total0), (busy1, total1) = config.stash[_CPU_AT_START], _machine_cpu()
    if total1 > total0:
        terminalreporter.write_line(f"machine CPU: {100 * (busy1 - busy0) / (total1 - total0):.0f} % busy over the "
                                    f"session, {os.cpu_count()} cores (every process on the machine counts)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """Each test's wall interval and CPU (this process's own, and that of the children it waited for), one line
    per test in artifacts/logs/<process>/timeline.tsv: where `make test`'s time goes (docs/contributing.md)."""
    wall, own, children = time.time(), resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    yield
    own2, children2 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    path = _timeline()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as out:
        out.write(f"{wall:.1f}\t{time.time():.1f}\t{own2.ru_utime + own2.ru_stime - own.ru_utime - own.ru_stime:.1f}\t"
                  f"{children2.ru_utime + children2.ru_stime - children.ru_utime - children.ru_stime:.1f}\t{item.nodeid}\n")

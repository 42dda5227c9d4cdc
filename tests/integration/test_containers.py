"""The compose stack (docker-compose.yml) on a real Docker engine: images built from infra/docker/Dockerfile*,
PostgreSQL, Redis, migrations, API + dashboard, worker, beat and a runner in containers.

The engine is Debian's dockerd, started and stopped here (tests/support/docker.py), with its images and build
cache kept outside the clone so that a second run rebuilds only what changed. No image registry is reachable,
so the official base images are replaced by stand-ins built from Debian's packages; the compose file is the
users' own, with infra/docker/compose.test.yml putting every service in the host's network on loopback ports
(the engine has no bridge network here).
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
import redis

from infra.localstack import REPO, VENV_BIN, answers, free_port, wait_until
from tests.support.docker import Bases, Compose, Engine, missing_tools, standin_bases
from tests.support.jtl import independent_cells, write_jtl
from tests.support.old_release import OLD_REVISION, cells_by_name, numeric_fields, write_old_database

# The first run on a machine builds the stand-ins and both images from scratch (tens of minutes on two busy
# cores); later runs reuse the engine's cache.
pytestmark = [pytest.mark.xdist_group("containers"), pytest.mark.containers, pytest.mark.timeout(3600)]

IMAGES = ("benchtrail:local", "benchtrail-runner:local")
SERVICES = ("postgres", "redis", "api", "worker", "beat", "runner")


@pytest.fixture(scope="module")
def engine(logdir: Path) -> Iterator[Engine]:
    missing = missing_tools()
    assert not missing, f"the container test needs {', '.join(missing)}: run infra/scripts/bootstrap.sh --docker"
    eng = Engine(logdir=logdir).start()
    yield eng
    eng.stop()


@pytest.fixture(scope="module")
def bases(engine: Engine, logdir: Path) -> Bases:
    """Stand-in bases, then both images built by `docker compose build` from the users' compose file."""
    started = time.monotonic()
    found = standin_bases(engine, logdir / "docker-standins.log")
    standins_s = time.monotonic() - started
    compose = Compose(engine, "bt-build", REPO, {**found.compose_env(), **_ports()})
    log = logdir / "docker-build.log"
    log.write_text("")
    for service in ("migrate", "runner"):   # one after the other: two cores
        compose("build", service, timeout=3600, log=log)
    built_s = time.monotonic() - started - standins_s
    sizes = {image.split(":")[0]: engine.image_size(image) for image in IMAGES}
    base = engine.image_size(found.python)
    # Measurements for the manual (docs/how-to/docker.md), never asserted: speed belongs to benchmarks. The images'
    # own layers = size - the Python base's (a stand-in here, the official image for users).
    print(f"\nRESULT docker_driver={engine.driver} standins_s={standins_s:.1f} build_s={built_s:.1f} "
          f"python_base_mb={base / 1e6:.0f} "
          + " ".join(f"{name}_mb={size / 1e6:.0f} {name}_own_mb={(size - base) / 1e6:.0f}" for name, size in sizes.items()))
    engine.forget_old_layers()
    return found


def _ports() -> dict[str, str]:
    return {"BENCHTRAIL_TEST_POSTGRES_PORT": str(free_port()), "BENCHTRAIL_TEST_REDIS_PORT": str(free_port()),
            "BENCHTRAIL_TEST_API_PORT": str(free_port())}


class Stack:
    """One compose project on free loopback ports; `down -v` at the end whatever happened."""

    def __init__(self, engine: Engine, bases: Bases, logdir: Path) -> None:
        self.ports = _ports()
        self.project = f"bt-{uuid.uuid4().hex[:10]}"
        self.url = f"http://127.0.0.1:{self.ports['BENCHTRAIL_TEST_API_PORT']}"
        self.compose = Compose(engine, self.project, REPO, {
            **bases.compose_env(), **self.ports, "BENCHTRAIL_PUBLIC_URL": self.url,
            # Two cores shared by the whole suite: one API process, one worker process.
            "BENCHTRAIL_API_WORKERS": "1", "BENCHTRAIL_WORKER_CONCURRENCY": "1"})
        self.engine = engine
        self.logdir = logdir

    def up(self, *services: str) -> None:
        self.compose("up", "--detach", "--no-build", *services)

    def wait_healthy(self, timeout: float = 300) -> None:
        def ready() -> bool:
            states = self.compose.states()
            failed = {s: r for s, r in states.items() if r["State"] == "exited" and r.get("ExitCode") not in (0, "0")}
            assert not failed, f"services exited: {failed}\n{self.compose.logs()[-8000:]}"
            return all(states.get(s, {}).get("State") == "running" for s in SERVICES) and \
                answers(f"{self.url}/api/health", timeout=3)
        wait_until(ready, timeout, "the compose stack to be up", interval=1)

    def exec(self, service: str, *argv: str) -> str:
        return self.compose("exec", "-T", service, *argv).stdout

    def admin_token(self) -> str:
        out = self.exec("api", "benchtrail-env", "benchtrail", "admin", "create-token", "--role", "admin",
                        "--name", f"test-{uuid.uuid4().hex[:6]}")
        return out.strip().splitlines()[-1]

    def save_logs(self, name: str) -> None:
        (self.logdir / f"compose-{name}.log").write_text(self.compose.logs())

    def down(self) -> None:
        self.compose("down", "--volumes", "--remove-orphans", "--timeout", "30", check=False)


@pytest.fixture()
def stack(engine: Engine, bases: Bases, logdir: Path, request: pytest.FixtureRequest) -> Iterator[Stack]:
    s = Stack(engine, bases, logdir)
    try:
        yield s
    finally:
        s.save_logs(request.node.name)
        s.down()
        left = engine.docker("volume", "ls", "--quiet", "--filter", f"label=com.docker.compose.project={s.project}")
        assert not left.stdout.strip(), f"volumes left behind: {left.stdout}"


def api(stack: Stack, token: str) -> httpx.Client:
    return httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def wait_run(http: httpx.Client, slug: str, timeout: float = 240) -> dict:
    return wait_until(lambda: (r := http.get(f"/api/v1/runs/{slug}").json())["status"] in ("completed", "failed")
                      and r, timeout, f"run {slug} to finish", interval=0.5)


def cells_of(run: dict, variant: str) -> dict[tuple[str, int], dict]:
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {ld["id"]: ld for ld in run["loads"]}
    return {(scenarios[c["scenario_id"]], int(loads[c["load_id"]]["value"])): c for c in run["cells"]
            if variants[c["variant_id"]] == variant and scenarios[c["scenario_id"]] != "*"}


def test_compose_stack_uploads_runs_a_plan_and_keeps_its_data(stack: Stack, go_target: str, scratch: Path) -> None:
    stack.up()
    stack.wait_healthy()
    states = stack.compose.states()
    assert (states["secrets"]["State"], states["migrate"]["State"]) == ("exited", "exited")
    assert states["api"]["Health"] == "healthy"
    # Closed by default: production settings, processes not root, passwords only their users can read, Redis
    # refuses a client without its password.
    for service in ("api", "worker", "beat", "runner"):
        assert stack.exec(service, "id", "-u").strip() == "10001", service
    assert stack.exec("api", "printenv", "BENCHTRAIL_ENV").strip() == "production"
    secrets = stack.exec("api", "stat", "-c", "%n %a %u:%g", "/run/secrets/benchtrail/postgres-password",
                         "/run/secrets/benchtrail/redis-password", "/run/secrets/benchtrail/runner-token").split("\n")
    assert [line.split(" ", 1)[1] for line in secrets if line] == ["440 10001:999", "440 10001:999", "400 10001:10001"]
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=int(stack.ports["BENCHTRAIL_TEST_REDIS_PORT"]), socket_timeout=5).ping()
    # The dashboard is served by the API.
    http = httpx.Client(timeout=10)
    page = http.get(f"{stack.url}/")
    assert page.status_code == 200 and '<div id="root">' in page.text
    # And the manual, built into the image: its CLI reference names the client's commands.
    manual = http.get(f"{stack.url}/docs/reference/cli/")
    assert manual.status_code == 200 and "benchtrail upload" in manual.text, manual.text[:300]

    admin = stack.admin_token()
    with api(stack, admin) as http:
        slug = f"c-{uuid.uuid4().hex[:8]}"
        assert http.post("/api/v1/projects", json={"slug": slug, "is_public": False}).status_code == 201
        uploader = http.post(f"/api/v1/projects/{slug}/tokens", json={"name": "ci", "role": "uploader"}).json()["token"]

    # An upload with the CLI, from the host (as a CI job would), waited for.
    files = {"baseline": write_jtl(scratch / "baseline.jtl", seed=7), "agent": write_jtl(scratch / "agent.jtl", seed=8,
                                                                                        slowdown=1.2)}
    cli = subprocess.run([str(VENV_BIN / "benchtrail"), "upload", "--project", slug, "--url", stack.url,
                          "--variant", f"baseline={files['baseline']}", "--variant", f"agent={files['agent']}",
                          "--agent-version", "2.0.0", "--wait", "--json"],
                         env={**os.environ, "BENCHTRAIL_TOKEN": uploader}, capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    uploaded = json.loads(cli.stdout)
    assert uploaded["status"] == "completed"
    with api(stack, admin) as http:
        run = http.get(f"/api/v1/runs/{uploaded['run']}").json()
        for variant, path in files.items():
            got, expected = cells_of(run, variant), independent_cells(path)
            assert set(got) == set(expected)
            for key, exp in expected.items():
                cell = got[key]
                assert (cell["count"], cell["errors"]) == (exp["count"], exp["errors"])
                assert cell["latency_mean"] == pytest.approx(exp["latency_mean"], rel=1e-12)
                assert cell["latency_p75"] == pytest.approx(exp["latency_p75"], rel=1e-3)
                assert cell["latency_p99"] == pytest.approx(exp["latency_p99"], rel=1e-3)
                assert cell["throughput"] == pytest.approx(exp["throughput"], rel=1e-9)

        # A plan, run by the runner container with hey against a target on the host.
        plan = {"version": 1, "name": "on-compose", "tool": "hey", "pool": "local", "warmup_s": 0, "repetitions": 1,
                "variants": [{"name": "target", "role": "reference", "target": go_target}],
                "scenarios": [{"name": "ok", "path": "/ok"}], "loads": [{"concurrency": 2, "requests": 300}]}
        assert http.post(f"/api/v1/projects/{slug}/plans", json=plan).status_code == 201
        started = http.post(f"/api/v1/projects/{slug}/plans/on-compose/runs", json={})
        assert started.status_code == 202, started.text
        planned = wait_run(http, started.json()["slug"])
        assert planned["status"] == "completed", planned["status_detail"]
        assert planned["progress"]["runner"] == "compose"
        # hey's own output file, as the runner uploaded it: one row per request.
        raw = [f for f in planned["files"] if f["format"] == "hey-csv"]
        assert raw, planned["files"]
        rows = sum(_hey_rows(http.get(f["download_url"]).content) for f in raw)
        cell = cells_of(planned, "target")[("ok", 2)]
        assert rows == cell["count"] == 300
        kept = {"run": run, "planned": planned, "raw": http.get(run["files"][0]["download_url"]).content}

    # Down and up again: containers are new, the volumes (database, raw files, secrets) are the same.
    stack.compose("down", "--timeout", "30")
    assert not stack.compose.states()
    stack.up()
    stack.wait_healthy()
    assert "runner token kept" in stack.compose("logs", "--no-color", "migrate").stdout
    with api(stack, admin) as http:   # the admin token lives in the database: it survived too
        for key in ("run", "planned"):
            again = http.get(f"/api/v1/runs/{kept[key]['slug']}").json()
            assert again["status"] == "completed"
            assert again["cells"] == kept[key]["cells"]
        assert http.get(kept["run"]["files"][0]["download_url"]).content == kept["raw"]
    # Every long-running service with a health check reports healthy; the runner's (`benchtrail-runner check`)
    # means the API accepts its kept token and Redis its kept password.
    wait_until(lambda: all(stack.compose.states()[s]["Health"] == "healthy"
                           for s in ("postgres", "redis", "api", "worker", "runner")), 150,
               "the health checks", interval=2)


def _newest_revision() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    return str(ScriptDirectory.from_config(Config(str(REPO / "alembic.ini"))).get_current_head())


def _hey_rows(content: bytes) -> int:
    """Requests in hey's CSV output (possibly zstd-compressed by the runner), counted with csv alone."""
    if content[:4] == b"\x28\xb5\x2f\xfd":
        import zstandard

        content = zstandard.ZstdDecompressor().decompressobj().decompress(content)
    reader = csv.reader(io.StringIO(content.decode()))
    header = next(reader)
    assert header[0] == "response-time", header
    return sum(1 for _ in reader)


def test_compose_upgrades_a_database_made_by_an_earlier_release(stack: Stack, logdir: Path, scratch: Path) -> None:
    # The database and its raw files as an earlier release left them, in the stack's own volumes.
    stack.up("postgres")
    wait_until(lambda: stack.compose.states()["postgres"].get("Health") == "healthy", 180, "postgres", interval=1)
    password = stack.exec("postgres", "cat", "/run/secrets/benchtrail/postgres-password").strip()
    url = f"postgresql+psycopg://benchtrail:{password}@127.0.0.1:{stack.ports['BENCHTRAIL_TEST_POSTGRES_PORT']}/benchtrail"
    old = write_old_database(url, scratch / "old-data", scratch, logdir)
    stack.compose("run", "--rm", "--no-deps", "--user", "root", "--volume", f"{scratch / 'old-data'}:/old:ro",
                  "--entrypoint", "sh", "api", "-c", "cp -a /old/. /data/ && chown -R 10001:10001 /data")

    # `up` as after pulling a new release: migrate upgrades the schema, then everything starts.
    stack.up()
    stack.wait_healthy()
    migrate_log = stack.compose("logs", "--no-color", "migrate").stdout
    assert "database schema at the newest migration" in migrate_log
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        head = conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    assert head == _newest_revision() != OLD_REVISION
    with api(stack, old.uploader_token) as http:   # tokens the earlier release made still work
        for before in old.runs:
            after = http.get(f"/api/v1/runs/{before.slug}").json()
            assert after["status"] == "completed", after
            old_cells, new_cells = cells_by_name(before.document), cells_by_name(after)
            assert set(new_cells) == set(old_cells)
            for key, cell in old_cells.items():
                assert {k: new_cells[key].get(k) for k in numeric_fields(cell)} == numeric_fields(cell), key
            # ... and they are the numbers of the files (computed here, not by the product).
            if before.kind == "jtl":
                for variant, expected in before.expected.items():
                    for (label, threads), exp in expected.items():
                        cell = new_cells[(variant, label, str(threads))]
                        assert (cell["count"], cell["errors"]) == (exp["count"], exp["errors"])
                        assert cell["latency_p75"] == pytest.approx(exp["latency_p75"], rel=1e-3)
                        assert cell["throughput"] == pytest.approx(exp["throughput"], rel=1e-9)
            else:
                scores = {variant: c["score"] for (variant, scenario, _), c in new_cells.items() if scenario != "*"}
                assert scores == before.expected
            for f in after["files"]:   # raw files kept byte for byte
                assert http.get(f["download_url"]).content == before.files[f["variant"]].read_bytes()
        alerts = http.get(f"/api/v1/projects/{old.project}/alerts").json()["items"]
        assert {a["id"] for a in alerts} == {a["id"] for a in old.alerts}
        triaged = http.get(f"/api/v1/alerts/{old.triaged_alert}").json()
        assert triaged["state"] == "investigating" and "bisecting" in triaged["events"][-1]["note"]
        plans = http.get(f"/api/v1/projects/{old.project}/plans").json()["items"]
        assert [(p["name"], p["version"]) for p in plans] == [(p["name"], p["version"]) for p in old.plans]

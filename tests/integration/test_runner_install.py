"""A runner installed on its own, as on another host (README "Runner on another host"): the install
folder has its own virtualenv from worker/runner/uv.lock and none of the server; the runner is started
from that folder with only the API URL, the broker URL (with its password) and a runner token, and
runs a hey plan end to end against a local target."""

from __future__ import annotations

import csv
import io
import json
import os
import secrets
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import psutil
import pytest

from infra.localstack import REPO, VENV_BIN, Process, Redis, answers, free_port, wait_until
from tests.support.outputs import plain


REQUESTS = 300
STARTUP_S = 240   # generous: the shared 2-core machine can be very busy


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """infra/runner/install.sh into a fresh folder, with hey as its only tool."""
    prefix = tmp_path_factory.mktemp("load-host") / "benchtrail-runner"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHTRAIL_", "VIRTUAL_ENV", "UV_PROJECT"))}
    done = subprocess.run([str(REPO / "infra/runner/install.sh"), "--prefix", str(prefix), "--tools", "hey"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return prefix


@pytest.fixture(scope="module")
def passworded_stack(infra: dict[str, str], logdir: Path) -> Iterator[dict[str, str]]:
    """API and ingest worker on a Redis that requires a password (the test database is shared)."""
    broker = Redis(password=secrets.token_urlsafe(16)).start()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")},
           "BENCHTRAIL_REDIS_URL": broker.url, "BENCHTRAIL_PUBLIC_URL": url}
    started: list[Process] = []
    try:
        started.append(Process("install-api", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory",
                                               "--host", "127.0.0.1", "--port", str(port)], env, logdir))
        worker = Process("install-worker", [str(VENV_BIN / "benchtrail-supervise"), str(VENV_BIN / "celery"), "-A",
                                            "benchtrail_worker.app", "--quiet", "worker", "-Q", "ingest,analysis,default",
                                            "-c", "1", "-n", "install-worker@%h", "--loglevel", "INFO", "--without-gossip", "--without-mingle"],
                         env, logdir)
        started.append(worker)
        wait_until(lambda: answers(f"{url}/api/health"), STARTUP_S, "the API")
        wait_until(lambda: "ready" in worker.output(), STARTUP_S, "the ingest worker")
        yield {"api_url": url, "broker_url": broker.url}
    finally:
        for proc in reversed(started):
            proc.stop()
        broker.stop()


def _no_server_env() -> dict[str, str]:
    """What a fresh load host has: no BENCHTRAIL_* variables, no repository virtualenv on PATH."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}


def test_the_install_has_the_runner_and_none_of_the_server(installed: Path) -> None:
    python = installed / "venv" / "bin" / "python"
    for module in ("benchtrail", "benchtrail_worker", "fastapi", "sqlalchemy", "polars", "scipy", "matplotlib"):
        done = subprocess.run([str(python), "-c", f"import {module}"], env=_no_server_env(), cwd=installed,
                              capture_output=True, text=True)
        assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr, f"{module} is importable in the install"
    done = subprocess.run([str(python), "-c", "import benchtrail_runner.tasks, sys; print(benchtrail_runner.__file__)"],
                          env={**_no_server_env(), "BENCHTRAIL_RUNNER_TOKEN": "x"}, cwd=installed,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed / "venv")   # a copy, not the checkout
    assert os.path.realpath(installed / "tools" / "bin" / "hey") == os.path.realpath("/usr/bin/hey")


def _write_env(path: Path, **values: str) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    path.chmod(0o600)
    return path


def test_check_names_what_is_wrong(installed: Path, passworded_stack: dict[str, str], runner_token: str,
                                   tmp_path: Path) -> None:
    runner = str(installed / "bin" / "benchtrail-runner")
    good = _write_env(tmp_path / "good.env", BENCHTRAIL_API_URL=passworded_stack["api_url"],
                      BENCHTRAIL_BROKER_URL=passworded_stack["broker_url"], BENCHTRAIL_RUNNER_TOKEN=runner_token)
    done = subprocess.run([runner, "check", "--env-file", str(good), "--tools", "hey"], env=_no_server_env(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    no_password = passworded_stack["broker_url"].replace(passworded_stack["broker_url"].split("@")[0] + "@", "redis://")
    bad = _write_env(tmp_path / "bad.env", BENCHTRAIL_API_URL=passworded_stack["api_url"],
                     BENCHTRAIL_BROKER_URL=no_password, BENCHTRAIL_RUNNER_TOKEN="bt_not-a-token")
    done = subprocess.run([runner, "check", "--env-file", str(bad), "--tools", "hey,k6"],
                          env={**_no_server_env(), "BENCHTRAIL_TOOLS_DIR": str(tmp_path / "none")},
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "token is refused (401)" in done.stderr and "broker: AuthenticationError" in done.stderr
    assert "k6 is not installed" in done.stderr
    assert runner_token not in done.stderr + done.stdout
    missing = subprocess.run([runner, "start"], env=_no_server_env(), cwd=tmp_path, capture_output=True, text=True,
                             timeout=60)
    assert missing.returncode != 0 and "BENCHTRAIL_RUNNER_TOKEN is not set" in missing.stderr


def test_installed_runner_runs_a_plan_end_to_end(installed: Path, passworded_stack: dict[str, str],
                                                 runner_token: str, admin_token: str, go_target: str,
                                                 tmp_path: Path, logdir: Path) -> None:
    api_url = passworded_stack["api_url"]
    env_file = _write_env(tmp_path / "runner.env", BENCHTRAIL_API_URL=api_url,
                          BENCHTRAIL_BROKER_URL=passworded_stack["broker_url"], BENCHTRAIL_RUNNER_TOKEN=runner_token)
    runner = Process("installed-runner", [str(installed / "bin" / "benchtrail-runner"), "start", "--env-file",
                                          str(env_file)], _no_server_env(), logdir, cwd=tmp_path)
    try:
        wait_until(lambda: "ready" in runner.output() or not runner.alive(), STARTUP_S, "the installed runner")
        assert runner.alive(), runner.output()
        # The Celery worker doing the work runs the install's Python, not the checkout's.
        cmdlines = [" ".join(p.cmdline()) for p in psutil.Process(runner.proc.pid).children(recursive=True)]
        assert any(str(installed / "venv") in c and "benchtrail_runner.app" in c for c in cmdlines), cmdlines

        admin = {"Authorization": f"Bearer {admin_token}"}
        with httpx.Client(base_url=api_url, timeout=30) as api:
            slug = f"p-install-{secrets.token_hex(4)}"
            assert api.post("/api/v1/projects", json={"slug": slug, "is_public": False}, headers=admin).status_code == 201
            plan = {"version": 1, "name": "remote-hey", "tool": "hey",   # pool "default": the runner's default
                    "variants": [{"name": "target", "role": "reference", "target": go_target,
                                  "resources": {"source": "process"}}],
                    "scenarios": [{"name": "slow", "path": "/slow"}],
                    "loads": [{"concurrency": 4, "requests": REQUESTS}], "repetitions": 1}
            r = api.post(f"/api/v1/projects/{slug}/plans", content=json.dumps(plan),
                         headers={**admin, "Content-Type": "application/json"})
            assert r.status_code == 201, r.text
            r = api.post(f"/api/v1/projects/{slug}/plans/remote-hey/runs", json={}, headers=admin)
            assert r.status_code == 202, r.text
            run_slug = r.json()["slug"]
            run = wait_until(lambda: (x := api.get(f"/api/v1/runs/{run_slug}", headers=admin).json())["status"]
                             in ("completed", "failed", "cancelled") and x, 180, f"run {run_slug} to end", interval=0.3)
            assert run["status"] == "completed", (run["status_detail"], runner.output()[-3000:])
            assert run["progress"]["runner"] == socket.gethostname()   # the default name: the host's

            scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
            cell = next(c for c in run["cells"] if scenarios[c["scenario_id"]] == "slow" and c["count"] is not None)
            hey_files = [f for f in run["files"] if f["format"] == "hey-csv"]
            assert len(hey_files) == 1
            raw = plain(api.get(hey_files[0]["download_url"], headers=admin).content).decode()
            rows = list(csv.DictReader(io.StringIO(raw)))
            latencies_ms = np.array([float(row["response-time"]) * 1000.0 for row in rows])
            assert len(rows) == REQUESTS and cell["count"] == REQUESTS and cell["errors"] == 0
            assert cell["latency_mean"] == pytest.approx(float(latencies_ms.mean()), abs=1e-3)   # exact in ingest
            totals = [c for c in run["cells"] if scenarios[c["scenario_id"]] == "*"]
            assert totals and totals[0]["cpu_pct"] is not None and totals[0]["cpu_pct"] > 0   # sampled by the runner
    finally:
        runner.stop()
    assert runner_token not in runner.output() and passworded_stack["broker_url"] not in runner.output()

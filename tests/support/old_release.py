"""A database written by an earlier release of Benchtrail, for the upgrade tests (the compose stack's `migrate`
service, `make up`): every old run must still open, with the numbers that release showed.

`write_old_database(database_url, data_dir, workdir, logdir)` takes that release's own code from the repository's
history (`git archive OLD_RELEASE`: its backend, worker, runner and migrations), builds the schema with ITS
migrations (up to OLD_REVISION, a few behind today's), starts ITS API and ITS Celery worker (on the current
virtualenv: that release's dependencies are a subset of today's) against the given PostgreSQL database, a
throw-away Redis and `data_dir` (its raw files), and through its HTTP API writes what a team has after a while:

- a JMeter A/B run (baseline and agent, thread groups 10/20/50, two labels): latency cells from HDR histograms;
- nine JMH runs of one benchmark over agent versions 1.0.0 .. 1.8.0, the agent 10% slower from 1.5.0 on: trail
  and overhead alerts, one of them moved to `investigating` with a note;
- a plan (hey against a loopback target).

It returns what that release showed for each (the run documents, the alerts, the plans), the tokens it made, and
each run's expected numbers computed independently from the uploaded files (numpy for the JTL, the JMH scores as
written).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from infra.localstack import REPO, VENV_BIN, Process, Redis, answers, celery_command, free_port, wait_until, worker_args
from tests.support.jtl import independent_cells, write_jtl

# The release before resumable upload parts, unrecorded blobs, re-measured runs and run exclusion: its newest
# migration is 0018 (today's go four further).
OLD_RELEASE = "264799a08141c1d19aecfd6d84fc49fae29c9d56"
OLD_REVISION = "0018"
JMH_BENCHMARK = "io.example.SpanBench.startSpan"
JMH_VERSIONS = [f"1.{i}.0" for i in range(9)]
JMH_STEP_AT = 5          # the agent is 10% slower from JMH_VERSIONS[5] on


@dataclass
class OldRun:
    slug: str
    kind: str                                   # "jtl" | "jmh"
    document: dict[str, Any]                    # GET /api/v1/runs/{slug} as the old release answered
    files: dict[str, Path]                      # variant -> the uploaded file
    expected: dict[str, Any] = field(default_factory=dict)   # independent numbers (see below)


@dataclass
class OldData:
    project: str
    admin_token: str
    uploader_token: str
    runs: list[OldRun]
    alerts: list[dict[str, Any]]
    triaged_alert: int
    plans: list[dict[str, Any]]


def old_tree(workdir: Path) -> Path:
    """OLD_RELEASE's backend, worker (with the runner), migrations and alembic.ini, from this repository's history."""
    tree = workdir / "old-release"
    tree.mkdir(parents=True, exist_ok=True)
    known = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{OLD_RELEASE}^{{commit}}"], capture_output=True)
    if known.returncode != 0:
        raise RuntimeError(f"the upgrade test needs the earlier release {OLD_RELEASE[:10]} from this repository's "
                           "history; this clone lacks it (a shallow clone? run `git fetch --unshallow`)")
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", OLD_RELEASE, "backend", "worker",
                              "migrations", "alembic.ini", "docs"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def _env(tree: Path, database_url: str, redis_url: str, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHTRAIL_")}
    env.update({
        # The old release's packages before today's (installed editable in the virtualenv's site-packages).
        "PYTHONPATH": os.pathsep.join(str(tree / p) for p in ("backend", "worker", "worker/runner")),
        "BENCHTRAIL_ENV": "test",
        "BENCHTRAIL_DATABASE_URL": database_url,
        "BENCHTRAIL_REDIS_URL": redis_url,
        "BENCHTRAIL_DATA_DIR": str(data_dir),
        "BENCHTRAIL_RATE_LIMIT_WRITES_PER_TOKEN": "1000000/minute",
        "BENCHTRAIL_RATE_LIMIT_WRITES_PER_ADDRESS": "1000000/minute",
        "BENCHTRAIL_RATE_LIMIT_FAILED_AUTH_PER_ADDRESS": "100000/minute",
    })
    return env


def _old_python(tree: Path, env: dict[str, str], *args: str) -> str:
    out = subprocess.run([str(VENV_BIN / "python"), *args], cwd=tree, env=env, capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"the earlier release's `{' '.join(args[:4])}` failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def jmh_text(score: float) -> bytes:
    return ("Benchmark                        Mode   Cnt   Score    Error  Units\n"
            f"{JMH_BENCHMARK}  sample  2000  {score:.4f} ± 0.0020  ms/op\n").encode()


def jmh_scores(seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Baseline ~2 ms/op; the agent 5% slower, 15% from JMH_STEP_AT on (rounded as the files write them)."""
    rng = np.random.default_rng(seed)
    n = len(JMH_VERSIONS)
    ref = np.round(2.0 * (1 + rng.normal(0, 0.002, n)), 4)
    added = np.where(np.arange(n) >= JMH_STEP_AT, 15.0, 5.0) + rng.normal(0, 0.2, n)
    return ref, np.round(ref * (1 + added / 100), 4)


def write_old_database(database_url: str, data_dir: Path, workdir: Path, logdir: Path) -> OldData:
    """See the module's docstring. `database_url` names an empty database the caller made (and keeps)."""
    tree = old_tree(workdir)
    redis = Redis().start()
    env = _env(tree, database_url, redis.url, data_dir)
    procs: list[Process] = []
    try:
        _old_python(tree, env, "-m", "alembic", "upgrade", "head")
        revision = _old_python(tree, env, "-m", "alembic", "current").split()
        assert revision and revision[0].startswith(OLD_REVISION), f"the earlier release's schema is at {revision}"
        admin = _old_python(tree, env, "-c", "from benchtrail.cli.main import main; main()", "admin", "create-token",
                            "--role", "admin", "--name", "old-admin").strip().splitlines()[-1]
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        procs.append(Process("old-api", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory",
                                         "--host", "127.0.0.1", "--port", str(port)],
                             {**env, "BENCHTRAIL_PUBLIC_URL": url}, logdir, cwd=tree))
        procs.append(Process("old-worker", celery_command(VENV_BIN, *worker_args("old-worker", "ingest,analysis,default", 2),
                                                          "--without-gossip", "--without-mingle"),
                             env, logdir, cwd=tree))
        wait_until(lambda: answers(f"{url}/api/health"), 120,
                   "the earlier release's API")
        wait_until(lambda: "ready" in procs[1].output(), 180, "the earlier release's worker")
        with httpx.Client(base_url=url, timeout=60) as http:
            return _write(http, admin, workdir)
    finally:
        for proc in procs:
            proc.stop()
        redis.stop()


def _check(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"
    return r.json()


def _write(http: httpx.Client, admin: str, workdir: Path) -> OldData:
    auth = {"Authorization": f"Bearer {admin}"}
    slug = "old-release"
    _check(http.post("/api/v1/projects", json={"slug": slug, "name": "Written by an earlier release",
                                               "is_public": False}, headers=auth), 201)
    uploader = _check(http.post(f"/api/v1/projects/{slug}/tokens", json={"name": "ci", "role": "uploader"},
                                headers=auth), 201)["token"]
    up = {"Authorization": f"Bearer {uploader}"}

    def upload(meta: dict[str, Any], files: dict[str, Path]) -> str:
        meta = {**meta, "files": [{"variant": v, **({"format": "jmh-text"} if p.suffix == ".txt" else {})}
                                  for v, p in files.items()]}
        body = _check(http.post(f"/api/v1/projects/{slug}/runs", headers=up, data={"metadata": json.dumps(meta)},
                                files=[("files", (p.name, p.read_bytes())) for p in files.values()]), 202)
        return str(body["run"])

    def analysed(run: str) -> dict[str, Any]:
        doc = wait_until(lambda: (d := http.get(f"/api/v1/runs/{run}", headers=up).json())["status"] in
                         ("completed", "failed") and d["analysis_status"] != "pending" and d, 120,
                         f"the earlier release to ingest and analyse run {run}", interval=0.2)
        assert doc["status"] == "completed" and doc["analysis_status"] == "done", doc
        return doc  # type: ignore[no-any-return]

    runs: list[OldRun] = []
    jtl = {"baseline": write_jtl(workdir / "old-baseline.jtl", seed=31),
           "agent": write_jtl(workdir / "old-agent.jtl", seed=32, slowdown=1.25)}
    run = upload({"agent_version": "0.9.0", "reference": "baseline", "environment": {"name": "lab", "cpus": 4}}, jtl)
    runs.append(OldRun(run, "jtl", analysed(run), jtl, {v: independent_cells(p) for v, p in jtl.items()}))

    ref, agent = jmh_scores()
    for i, version in enumerate(JMH_VERSIONS):
        files = {"baseline": workdir / f"old-baseline-{version}.txt", "agent": workdir / f"old-agent-{version}.txt"}
        files["baseline"].write_bytes(jmh_text(ref[i]))
        files["agent"].write_bytes(jmh_text(agent[i]))
        run = upload({"agent_version": version, "reference": "baseline", "environment": {"name": "lab", "cpus": 4}},
                     files)
        runs.append(OldRun(run, "jmh", analysed(run), files, {"baseline": float(ref[i]), "agent": float(agent[i])}))

    alerts = _check(http.get(f"/api/v1/projects/{slug}/alerts", headers=up), 200)["items"]
    assert alerts, "the earlier release raised no alert on a 10% step: the upgrade test would prove less"
    triaged = alerts[0]["id"]
    _check(http.patch(f"/api/v1/alerts/{triaged}", json={"state": "investigating", "note": "bisecting 1.4.0..1.5.0"},
                      headers=up), 200)
    alerts = _check(http.get(f"/api/v1/projects/{slug}/alerts", headers=up), 200)["items"]

    plan = {"version": 1, "name": "nightly-hey", "tool": "hey", "pool": "local",
            "variants": [{"name": "target", "role": "reference", "target": "http://127.0.0.1:18080"}],
            "scenarios": [{"name": "ok", "path": "/ok"}], "loads": [{"concurrency": 4, "requests": 2000}]}
    _check(http.post(f"/api/v1/projects/{slug}/plans", json=plan, headers=auth), 201)
    plans = _check(http.get(f"/api/v1/projects/{slug}/plans", headers=up), 200)["items"]
    return OldData(slug, admin, uploader, runs, alerts, triaged, plans)


def numeric_fields(doc: dict[str, Any]) -> dict[str, float | int]:
    return {k: v for k, v in doc.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and not k.endswith("_id")
            and k != "id"}


def cells_by_name(run: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """A run document's cells keyed by (variant name, scenario name, load value): ids are the database's, names
    are what a reader sees."""
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {ld["id"]: f"{ld['value']:g}" if isinstance(ld["value"], (int, float)) else str(ld["value"])
             for ld in run["loads"]}
    return {(variants[c["variant_id"]], scenarios[c["scenario_id"]], loads[c["load_id"]]): c for c in run["cells"]}

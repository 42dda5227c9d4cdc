"""`make bench-runner`: is a load test run by Benchtrail's runner as fast as the tool run by hand?

In one process and one run:
1. hey against a local Go target, run directly (subprocess, `-o csv`), and the same hey plan run through
   the whole product (API → Redis → runner → upload → ingest). The plan runs REPETITIONS repetitions (the
   plans' default, stated in the plan), so each round runs hey directly as many times; throughput of both
   with the same definition as ingest's cell of several repetitions: all samples / the sum of each
   repetition's measured time (last end − first start). Rounds interleaved direct/runner/direct/runner,
   medians.
2. A constant-rate plan at 1000 QPS (k6 constant-arrival-rate) through the runner; the achieved rate is
   read from the ingested cell (all repetitions).
Last line: RESULT ratio=<runner/direct> rate_error_pct=<|achieved − 1000| / 1000 · 100>
BENCH_SMOKE=1 (bench/sizes.py): one round of 2 repetitions of 200 requests, 50 req/s for 1 s; its numbers mean
nothing.
"""

from __future__ import annotations

import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from infra.localstack import VENV_BIN, Postgres, Process, Redis, celery_worker, free_port, migrate, wait_until  # noqa: E402
from sizes import announce, size  # noqa: E402

TOOLS = Path(os.environ.get("BENCHTRAIL_TOOLS_DIR", REPO / ".tools"))
CONCURRENCY = size(20, smoke=4)
REQUESTS = size(20000, smoke=200)
ROUNDS = size(2, smoke=1)           # interleaved direct/runner rounds
REPETITIONS = size(3, smoke=2)      # per plan; as many direct hey runs per round
RATE = size(1000, smoke=50)
RATE_SECONDS = size(10, smoke=1)


def hey_direct(url: str, workdir: Path, i: int) -> tuple[int, float]:
    """One hey run: (samples, measured seconds: last end − first start)."""
    out = workdir / f"direct-{i}.csv"
    with out.open("wb") as f:
        subprocess.run([str(TOOLS / "bin" / "hey") if (TOOLS / "bin" / "hey").exists() else "hey",
                        "-n", str(REQUESTS), "-c", str(CONCURRENCY), "-o", "csv", url], stdout=f, check=True)
    starts, ends = [], []
    with out.open() as f:
        for row in csv.DictReader(f):
            start = float(row["offset"])
            starts.append(start)
            ends.append(start + float(row["response-time"]))
    # hey exits 0 whatever happened: the count is what says it ran.
    assert len(starts) == REQUESTS, f"hey made {len(starts)} of {REQUESTS} requests"
    return len(starts), max(ends) - min(starts)


def cell_of(run: dict, scenario: str, count: int | None = None) -> dict:
    """The run's one cell of `scenario` (one variant, one load), checked to hold samples: `count` of them,
    when given (all repetitions')."""
    ids = [s["id"] for s in run["scenarios"] if s["name"] == scenario]
    cells = [c for c in run["cells"] if c["scenario_id"] in ids]
    if len(cells) != 1:
        raise SystemExit(f"run {run['slug']}: expected one cell of scenario {scenario!r}, found {len(cells)}")
    found = cells[0]["count"]
    if not found or (count is not None and found != count):
        raise SystemExit(f"run {run['slug']}: the cell of {scenario!r} holds {found} samples, "
                         f"expected {count or 'some'} ({REPETITIONS} repetitions)")
    return cells[0]


def main() -> int:
    announce("bench-runner")
    workdir = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    logs = workdir / "logs"
    logs.mkdir()
    pg, rd = Postgres().start(), Redis().start()
    procs: list[Process] = []
    try:
        api_port, target_port = free_port(), free_port()
        api = f"http://127.0.0.1:{api_port}"
        env = {**os.environ, "BENCHTRAIL_DATABASE_URL": pg.url, "BENCHTRAIL_REDIS_URL": rd.url,
               "BENCHTRAIL_DATA_DIR": str(workdir / "data"), "BENCHTRAIL_PUBLIC_URL": api,
               "BENCHTRAIL_API_URL": api, "PATH": f"{TOOLS / 'bin'}:{os.environ.get('PATH', '')}"}
        os.environ.update({k: v for k, v in env.items() if k.startswith("BENCHTRAIL_")})
        migrate(pg.url)
        from benchtrail.db_boundary import unit_of_work
        from benchtrail.projects.schemas import ProjectCreate
        from benchtrail.projects.service import create_project, create_token

        with unit_of_work() as session:
            project = create_project(session, ProjectCreate(slug="bench"))
            admin = create_token(session, project=project, name="bench", role="admin").token
            runner_token = create_token(session, project=None, name="bench-runner", role="runner").token
        procs.append(Process("target", [str(TOOLS / "bin" / "benchtrail-demo-target"), "-addr",
                                        f"127.0.0.1:{target_port}"], env, logs))
        procs.append(Process("api", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory",
                                     "--port", str(api_port)], env, logs))
        # The workers start while the API does.
        procs.append(celery_worker("worker", env, logs))
        procs.append(celery_worker("runner", {**env, "BENCHTRAIL_RUNNER_TOKEN": runner_token,
                                              "BENCHTRAIL_RUNNER_POOLS": "bench"}, logs, queues="runner.bench",
                                   concurrency=1))
        wait_until(lambda: urllib.request.urlopen(f"{api}/api/health", timeout=2).status == 200, 240, "the API")
        target = f"http://127.0.0.1:{target_port}"
        from benchtrail_runner.client import Client

        client = Client(api, admin)

        def through_runner(name: str, plan: dict) -> dict:
            r = client.http.post("/api/v1/projects/bench/plans", content=json.dumps(plan),
                                 headers={"Content-Type": "application/json"})
            client._check(r)
            run = client.post(f"/api/v1/projects/bench/plans/{name}/runs", {})
            done = client.wait_for_run(run["slug"], timeout=300)
            assert done["status"] == "completed", done.get("status_detail")
            return done

        hey_plan = {"version": 1, "name": "hey", "tool": "hey", "pool": "bench",
                    "variants": [{"name": "target", "role": "reference", "target": target}],
                    "scenarios": [{"name": "slow", "path": "/slow"}],
                    "loads": [{"concurrency": CONCURRENCY, "requests": REQUESTS}], "repetitions": REPETITIONS}
        direct, runner = [], []
        for i in range(ROUNDS):
            runs = [hey_direct(f"{target}/slow", workdir, REPETITIONS * i + r) for r in range(REPETITIONS)]
            direct.append(sum(n for n, _ in runs) / sum(s for _, s in runs))
            run = through_runner("hey", hey_plan)
            runner.append(cell_of(run, "slow", REPETITIONS * REQUESTS)["throughput"])
            print(f"round {i + 1} ({REPETITIONS} x {REQUESTS} requests each way): direct {direct[-1]:.1f} req/s, "
                  f"runner {runner[-1]:.1f} req/s", flush=True)
        ratio = statistics.median(runner) / statistics.median(direct)

        rate_plan = {"version": 1, "name": "rate", "tool": "constant-rate", "pool": "bench",
                     "variants": [{"name": "target", "role": "reference", "target": target}],
                     "scenarios": [{"name": "ok", "path": "/ok"}],
                     "loads": [{"rate": RATE, "duration_s": RATE_SECONDS}], "repetitions": REPETITIONS}
        cell = cell_of(through_runner("rate", rate_plan), "ok")
        achieved = cell["throughput"]
        rate_error = abs(achieved - RATE) / RATE * 100
        print(f"hey direct median {statistics.median(direct):.1f} req/s, through the runner "
              f"{statistics.median(runner):.1f} req/s (target ≥ 0.98)")
        print(f"constant rate: asked {RATE}/s for {RATE_SECONDS} s x {REPETITIONS} repetitions, achieved "
              f"{achieved:.2f}/s ({cell['count']} requests; target ±1%)")
        print(f"RESULT ratio={ratio:.3f} rate_error_pct={rate_error:.3f}")
        return 0
    finally:
        for p in reversed(procs):
            p.stop()
        rd.stop()
        pg.stop()


if __name__ == "__main__":
    sys.exit(main())

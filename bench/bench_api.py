"""`make bench-api`: does the API stay fast with thousands of runs in one project?

In one process and one run:
1. A real stack on free ports: PostgreSQL, Redis, the production API server (`benchtrail-api`, one
   worker per core), two Celery worker processes and beat (whose sweeper folds the projects' change
   rows into their revisions every BENCHTRAIL_SWEEPER_INTERVAL_S, as in `make up`).
2. Seeding through the real ingest: BENCH_API_RUNS (default 2,000) JMeter runs in one public project,
   uploaded through the API in agent-version order by a few parallel clients: two variants, thread
   groups 10/20/50, two labels (+ the "All" total), and a 30% step in the agent's latency at the
   middle run. Each run is ingested and analysed by the workers; their log gives every analysis time.
3. wrk (`-c 32`, the same duration each) against the trivial endpoint (one project read) and the
   run document, series, overheads, trail, trail overhead and runs list of the same server;
   the trivial endpoint is measured before and after the others and the mean is the reference.
   Then the run document at 16 connections with its p95 (wrk's own latency histogram).
4. The same again on a second server that keeps no answers in memory (BENCHTRAIL_ANSWER_CACHE_MB=0,
   every read built from the database): its ratios are logged next to the result's.
Last line: RESULT run_ratio= trail_ratio= list_ratio= series_ratio= overheads_ratio= trivial_rps= run_p95_ms=
analysis_growth= (ratios: req/s of the endpoint / req/s of the trivial endpoint, trail_ratio the lower of the trail
and the trail overhead; analysis_growth: median analysis time of the last 21 runs / that of runs 90..110).
BENCH_SMOKE=1 (bench/sizes.py): 6 runs from small files, one Celery worker, one process per API server, wrk on one
thread and 4 connections (2 for the p95) for 100 answers, windows of 2 runs; its numbers mean nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from infra.localstack import (VENV_BIN, Postgres, Process, Redis, answers, beat_command, celery_worker, free_port,  # noqa: E402
                              migrate, wait_until)
from sizes import API_ENV, announce, size  # noqa: E402
from tests.support.jtl import write_jtl  # noqa: E402

RUNS = size(2000, smoke=6, env="BENCH_API_RUNS")
UPLOADERS = size(4, smoke=2)
WORKERS = size(2, smoke=1)            # Celery worker processes
FILES = size(8, smoke=2)              # distinct JTLs per variant, uploaded in turn
PER_GROUP = size(150, smoke=20)       # samples per thread group and label in each JTL
DURATION_S = size(8, smoke=1, env="BENCH_API_SECONDS")
WRK_THREADS = size(2, smoke=1)
CONNECTIONS = size(32, smoke=4)       # for req/s
P95_CONNECTIONS = size(16, smoke=2)   # for the run document's p95
# analysis_growth: the median analysis time of the last WINDOW runs against that of the WINDOW from EARLY on.
EARLY, WINDOW = size(89, smoke=0), size(21, smoke=2)
PROJECT = "bench-api"
# Smoke mode stops each wrk thread after this many answers instead of after DURATION_S (wrk's shortest is 1 s): the
# same path, a fraction of the CPU. 0: no cap (a measurement).
SMOKE_ANSWERS = size(0, smoke=100)
WRK_LUA = ("""
answered = 0
response = function(status, headers, body)
  answered = answered + 1
  if answered >= %d then wrk.thread:stop() end
end
""" % SMOKE_ANSWERS if SMOKE_ANSWERS else "") + """
done = function(summary, latency, requests)
  io.write(string.format('JSON {"requests":%d,"duration_us":%d,"non2xx":%d,"errors":%d,"p95_us":%d}\\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(95)))
end
"""


def log(msg: str) -> None:
    print(f"bench-api: {msg}", flush=True)


def wrk(url: str, connections: int, lua: Path) -> dict[str, float]:
    out = subprocess.run(["wrk", f"-t{WRK_THREADS}", f"-c{connections}", f"-d{DURATION_S}s", "-s", str(lua), url],
                         capture_output=True, text=True, check=True).stdout
    found = re.search(r"^JSON (.*)$", out, re.M)
    if found is None:
        raise SystemExit(f"wrk printed no summary:\n{out}")
    data = json.loads(found.group(1))
    if data["non2xx"]:
        raise SystemExit(f"wrk saw {data['non2xx']} non-2xx answers on {url}")
    if data["errors"]:   # socket errors are mostly wrk's 2 s timeout: the endpoint is too slow; said, not hidden
        log(f"wrk saw {data['errors']} socket errors (timeouts) on {url}")
    data["rps"] = data["requests"] / (data["duration_us"] / 1e6)
    return data


def measure(api: str, endpoints: dict[str, str], lua: Path, what: str) -> tuple[float, dict[str, float]]:
    """req/s of each endpoint and of the trivial one (the mean of before and after them) at CONNECTIONS."""
    log(f"measuring {api}: {what}")
    trivial_url = f"{api}/api/v1/projects/{PROJECT}"
    wrk(trivial_url, CONNECTIONS, lua)   # warm every worker's caches and connections
    trivial = [wrk(trivial_url, CONNECTIONS, lua)["rps"]]
    rps = {}
    for name, path in endpoints.items():
        rps[name] = wrk(api + path, CONNECTIONS, lua)["rps"]
        log(f"{name:15s} {rps[name]:8.1f} req/s")
    trivial.append(wrk(trivial_url, CONNECTIONS, lua)["rps"])
    reference = statistics.fmean(trivial)
    log(f"{'trivial':15s} {reference:8.1f} req/s  (before {trivial[0]:.1f}, after {trivial[1]:.1f})")
    return reference, rps


def seed(api: str, token: str, workdir: Path) -> list[str]:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=api, headers=headers, timeout=60) as client:
        r = client.post("/api/v1/projects", json={"slug": PROJECT, "name": PROJECT})
        r.raise_for_status()
    baseline = [write_jtl(workdir / f"baseline-{i}.jtl", seed=1000 + i, per_group=PER_GROUP) for i in range(FILES)]
    agent = [write_jtl(workdir / f"agent-{i}.jtl", seed=2000 + i, per_group=PER_GROUP) for i in range(FILES)]
    agent_slow = [write_jtl(workdir / f"agent-slow-{i}.jtl", seed=3000 + i, per_group=PER_GROUP, slowdown=1.3)
                  for i in range(FILES)]

    def upload(i: int) -> str:
        agent_file = (agent_slow if i >= RUNS // 2 else agent)[i % FILES]
        meta = {"files": [{"variant": "baseline"}, {"variant": "agent"}], "agent_version": f"1.{i // 100}.{i % 100}",
                "environment": {"name": "bench", "cpus": 2}}
        files = [("files", (p.name, p.read_bytes(), "text/csv")) for p in (baseline[i % FILES], agent_file)]
        with httpx.Client(base_url=api, headers=headers, timeout=120) as client:
            r = client.post(f"/api/v1/projects/{PROJECT}/runs", data={"metadata": json.dumps(meta)}, files=files,
                            headers={"Idempotency-Key": f"bench-api-{i}"})
            r.raise_for_status()
            return r.json()["run"]

    started = time.monotonic()
    slugs: list[str] = []
    # In version order, a few at a time, as CI jobs of consecutive versions would upload them.
    with ThreadPoolExecutor(UPLOADERS) as pool:
        for n, slug in enumerate(pool.map(upload, range(RUNS)), 1):
            slugs.append(slug)
            if n % 250 == 0:
                log(f"{n} runs uploaded ({time.monotonic() - started:.0f} s)")
    return slugs


def wait_analysed(db_url: str, total: int) -> None:
    """Until every run is completed and its analysis has ended (read in the database: the runs list does not
    carry the analysis status), so that no analysis is left queued when the workers are stopped."""
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    counts = text("SELECT count(*) FILTER (WHERE analysis_status <> 'pending'), "
                  "count(*) FILTER (WHERE analysis_status = 'failed') FROM runs WHERE status = 'completed'")
    try:
        def done() -> bool:
            with engine.connect() as conn:
                return conn.execute(counts).one()[0] >= total
        wait_until(done, 3600, f"{total} runs to be completed and analysed", interval=2)
        with engine.connect() as conn:
            failed = conn.execute(counts).one()[1]
        if failed:
            raise SystemExit(f"{failed} of {total} analyses failed")
    finally:
        engine.dispose()


def unfolded(db_url: str) -> int:
    from sqlalchemy import create_engine, text

    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM project_changes")).scalar_one())
    finally:
        engine.dispose()


def analysis_times(worker_logs: list[Path]) -> dict[int, float]:
    times: dict[int, float] = {}
    for path in worker_logs:
        for line in path.read_text(errors="replace").splitlines():
            start = line.find("{")
            if start < 0 or '"analysed"' not in line:
                continue
            try:
                event = json.loads(line[start:])
            except ValueError:
                continue
            if event.get("event") == "analysed":
                times[int(event["run_id"])] = float(event["ms"])
    return times


def main() -> int:
    announce("bench-api")
    workdir = Path(tempfile.mkdtemp(prefix="bench-api-"))
    logs = workdir / "logs"
    logs.mkdir()
    pg, rd = Postgres().start(), Redis().start()
    procs: list[Process] = []
    try:
        api_port = free_port()
        api = f"http://127.0.0.1:{api_port}"
        env = {**os.environ, "BENCHTRAIL_DATABASE_URL": pg.url, "BENCHTRAIL_REDIS_URL": rd.url,
               "BENCHTRAIL_DATA_DIR": str(workdir / "data"), "BENCHTRAIL_PUBLIC_URL": api, "BENCHTRAIL_ENV": "test",
               # Seeding uploads thousands of runs with one token in minutes: more than the default write
               # limit (600/minute) lets through. Reads (what is measured) carry no token and are not counted.
               "BENCHTRAIL_RATE_LIMIT_WRITES_PER_TOKEN": "1000000/minute",
               "BENCHTRAIL_RATE_LIMIT_WRITES_PER_ADDRESS": "1000000/minute", **API_ENV}
        migrate(pg.url)
        os.environ.update({k: v for k, v in env.items() if k.startswith("BENCHTRAIL_")})
        # The token, beat and the workers are made and started while the API starts.
        procs.append(Process("api", [str(VENV_BIN / "benchtrail-api"), "--port", str(api_port)], env, logs))
        token = subprocess.run([str(VENV_BIN / "benchtrail"), "admin", "create-token", "--role", "admin",
                                "--name", "bench"], env=env, check=True, capture_output=True,
                               text=True).stdout.strip().splitlines()[-1]
        beat = Process("beat", beat_command(VENV_BIN, workdir / "beat-schedule"), env, logs)
        procs.append(beat)
        workers = [celery_worker(f"w{i}", env, logs, concurrency=1) for i in range(WORKERS)]
        procs += workers
        wait_until(lambda: answers(f"{api}/api/health", timeout=2), 240, "the API")

        t0 = time.monotonic()
        slugs = seed(api, token, workdir)
        wait_analysed(pg.url, len(slugs))
        log(f"{len(slugs)} runs ingested and analysed in {time.monotonic() - t0:.0f} s")
        for w in [*workers, beat]:   # the analysis is over: the measurements below get the cores to themselves
            w.stop()
        procs = [p for p in procs if p not in workers and p is not beat]
        log(f"change rows not yet folded into the revision: {unfolded(pg.url)} "
            f"(the sweeper folded {sum(w.output().count('runs.sweep') for w in workers) // 2} times)")

        with httpx.Client(base_url=api, timeout=30) as client:
            run = client.get(f"/api/v1/runs/{slugs[len(slugs) // 2]}").json()
            trail_id = next(c["trail_id"] for c in run["cells"] if c["latency_p75"] is not None)
        slug = run["slug"]
        endpoints = {
            "run": f"/api/v1/runs/{slug}",
            "series": f"/api/v1/runs/{slug}/series?metric=throughput",
            "overheads": f"/api/v1/runs/{slug}/overheads?metric=latency_p75",
            "trail": f"/api/v1/trails/{trail_id}?metric=latency_p75",
            "trail_overhead": f"/api/v1/trails/{trail_id}/overhead?metric=latency_p75",
            "list": f"/api/v1/projects/{PROJECT}/runs?per_page=50",
        }
        lua = workdir / "report.lua"
        lua.write_text(WRK_LUA)
        with httpx.Client(timeout=30) as client:
            sizes = {name: len(client.get(api + path).content) for name, path in endpoints.items()}
        for name, size in sizes.items():
            log(f"{name:15s} {size / 1024:.1f} kB")
        reference, rps = measure(api, endpoints, lua, "answers kept (the default)")
        p95_ms = wrk(api + endpoints["run"], P95_CONNECTIONS, lua)["p95_us"] / 1000

        times = analysis_times([logs / f"w{i}.log" for i in range(WORKERS)])
        ordered = [times[i] for i in sorted(times)]
        early = statistics.median(ordered[EARLY:EARLY + WINDOW]) if len(ordered) >= EARLY + WINDOW else float("nan")
        late = statistics.median(ordered[-WINDOW:])
        log(f"analysis ms: runs {EARLY + 1}..{EARLY + WINDOW} median {early:.1f}, last {WINDOW} median {late:.1f} "
            f"({len(ordered)} analysed)")
        # The same reads with nothing kept in memory (BENCHTRAIL_ANSWER_CACHE_MB=0): what the first read
        # of a run or trail after a write costs. Said next to the result, not hidden behind it.
        uncached_port = free_port()
        uncached = f"http://127.0.0.1:{uncached_port}"
        procs.append(Process("api-uncached", [str(VENV_BIN / "benchtrail-api"), "--port", str(uncached_port)],
                             {**env, "BENCHTRAIL_ANSWER_CACHE_MB": "0"}, logs))
        wait_until(lambda: answers(f"{uncached}/api/health", timeout=2), 240, "the API")
        procs[0].stop()   # one server at a time on the cores
        cold_reference, cold_rps = measure(uncached, endpoints, lua, "nothing kept (BENCHTRAIL_ANSWER_CACHE_MB=0)")
        ratios = {k: v / reference for k, v in rps.items()}
        for k, v in ratios.items():
            log(f"ratio {k}: {v:.2f} (nothing kept: {cold_rps[k] / cold_reference:.2f})")
        print(f"RESULT run_ratio={ratios['run']:.2f} trail_ratio={min(ratios['trail'], ratios['trail_overhead']):.2f} "
              f"list_ratio={ratios['list']:.2f} series_ratio={ratios['series']:.2f} "
              f"overheads_ratio={ratios['overheads']:.2f} trivial_rps={reference:.0f} run_p95_ms={p95_ms:.1f} "
              f"analysis_growth={late / early:.2f}")
        return 0
    finally:
        for p in reversed(procs):
            p.stop()
        rd.stop()
        pg.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

"""Analysis time per run as a project's history grows: the 2,000th run against the 100th.

A throw-away PostgreSQL (and Redis, where the upload's jobs are queued and left) is started, one
project gets BENCH_ANALYSIS_RUNS runs (default 2,000) of one environment, two variants (baseline and
agent, the reference is baseline), one scenario at three loads, as Benchtrail JSON with 300 latency
samples per cell plus CPU, and a step (+10% latency for the agent) half-way. Every run goes through
the product's own code in this process, in order:

  uploads.service.accept_upload  (validation, raw blob kept, run created)  — what POST /runs does
  ingest.service.ingest_run       (parse, cells, trails)                  — what the ingest task does
  trails.analysis.analyse_run     (overheads, windowed review, alerts)    — what the analysis task does

each in its own transaction, like the API and the worker; only HTTP and the Celery hop are left out.
The timed part is `analyse_run` plus its commit, with the project's default analysed metrics
(6 trails and 3 overhead trails per run, 5 metrics each). Runs arrive in version order; the noise of
this shared machine is tamed by taking medians of 21 runs around the 100th and of the last 21.

Last line: RESULT analysis_growth=<median around the last / median around the 100th>
  analysis_ms_100=<..> analysis_ms_last=<..> alerts=<open alerts> runs=<N>
Target: analysis_growth <= 2.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "backend"))

from tests.harness import Postgres, Redis, migrate  # noqa: E402

RUNS = int(os.environ.get("BENCH_ANALYSIS_RUNS", "2000"))
SAMPLES = 300
LOADS = (10, 20, 50)
SEED = 20261123


def result_file(rng: np.random.Generator, slowdown: float) -> bytes:
    loads = []
    for threads in LOADS:
        latency = rng.lognormal(np.log(20.0 * (1 + threads / 100)), 0.3, SAMPLES) * slowdown
        start = 1_700_000_000_000 + np.sort(rng.integers(0, 60_000, SAMPLES))
        loads.append({"load": {"kind": "threads", "value": threads, "duration_s": 60},
                      "stats": {"cpu_pct": float(round(40 * slowdown + rng.normal(0, 0.5), 3))},
                      "samples": {"start_ms": start.tolist(), "latency_ms": np.round(latency, 3).tolist(),
                                  "success": [True] * SAMPLES}})
    doc = {"format": "benchtrail", "version": 1, "tool": "bench",
           "variants": [{"scenarios": [{"name": "GET /owners", "loads": loads}]}]}
    return json.dumps(doc).encode()


def main() -> int:
    pg, rd = Postgres().start(), Redis().start()
    data = tempfile.mkdtemp(prefix="bench-analysis-")
    os.environ.update({"BENCHTRAIL_ENV": "test", "BENCHTRAIL_DATABASE_URL": pg.url, "BENCHTRAIL_REDIS_URL": rd.url,
                       "BENCHTRAIL_DATA_DIR": data, "BENCHTRAIL_PUBLIC_URL": "http://bench", "BENCHTRAIL_LOG_JSON": "true"})
    try:
        migrate(pg.url)
        return run()
    finally:
        rd.stop()
        pg.stop()


def run() -> int:
    from benchtrail.auth.principal import Principal
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.ingest.service import ingest_run
    from benchtrail.models import Alert
    from benchtrail.projects.schemas import ProjectCreate
    from benchtrail.projects.service import create_project
    from benchtrail.trails.analysis import analyse_run
    from benchtrail.uploads.service import accept_upload
    from sqlalchemy import func, select

    admin = Principal(token_id=1, project_id=None, role="admin", name="bench")
    with unit_of_work() as session:
        create_project(session, ProjectCreate(slug="bench", is_public=True))
    rng = np.random.default_rng(SEED)
    timings: list[float] = []
    started = time.perf_counter()
    for i in range(RUNS):
        step = 1.10 if i >= RUNS // 2 else 1.0
        meta = {"files": [{"variant": "baseline", "format": "benchtrail-json"},
                          {"variant": "agent", "format": "benchtrail-json"}],
                "agent_version": f"1.{i // 100}.{i % 100}", "reference": "baseline",
                "environment": {"cpus": 2, "os": "Linux"}}
        parts = [("baseline.json", io.BytesIO(result_file(rng, 1.0))),
                 ("agent.json", io.BytesIO(result_file(rng, 1.05 * step)))]
        with unit_of_work() as session:
            run_id = accept_upload(session, admin, "bench", json.dumps(meta), parts, None).id
        with unit_of_work() as session:
            ingest_run(session, run_id)
        t0 = time.perf_counter()
        with unit_of_work() as session:
            analyse_run(session, run_id)
        timings.append(time.perf_counter() - t0)
        if (i + 1) % 100 == 0:
            print(f"{i + 1} runs, {time.perf_counter() - started:.0f} s; analysis of the last 100: "
                  f"median {1000 * statistics.median(timings[-100:]):.0f} ms", flush=True)
    with unit_of_work() as session:
        open_alerts = session.scalar(select(func.count(Alert.id)).where(Alert.state != "withdrawn"))
        alerts_all = session.scalar(select(func.count(Alert.id)))
    early = statistics.median(timings[89:110] or timings)
    late = statistics.median(timings[-21:])
    print(f"alerts: {open_alerts} standing, {alerts_all - open_alerts} withdrawn")
    print(f"RESULT analysis_growth={late / early:.2f} analysis_ms_100={1000 * early:.0f} "
          f"analysis_ms_last={1000 * late:.0f} alerts={open_alerts} runs={RUNS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Analysis time per run as a project's history grows: around the 2,000th run against the 100th.

A throw-away PostgreSQL (and Redis, where the upload's jobs are queued and left) is started, one
project gets BENCH_ANALYSIS_RUNS runs (default 2,000) of one environment, two variants (baseline and
agent, the reference is baseline), one scenario at three loads, as Benchtrail JSON with 300 latency
samples per cell plus CPU, versions in order, and a step (+10% latency for the agent) half-way. Every
run goes through the product's own code in this process, each step in its own transaction like the
API and the worker (only HTTP and the Celery hop are left out):

  uploads.endpoints.keep_and_record + accept_upload (files checked and kept, run created) — what POST /runs does
  ingest.service.ingest_run       (parse, cells, trails)                  — what the ingest task does
  trails.analysis.analyse_run     (overheads, windowed review, alerts)    — what the analysis task does

Analysing every one of 2,000 runs takes longer than this shared 2-core machine allows (the overhead
bootstraps alone cost ~1-2 s per run under load), so the history is seeded by upload + ingest only,
and the analysis runs in two measured blocks of BLOCK runs: runs 100..100+BLOCK and the last BLOCK
runs. Each block starts with a forced analysis of its first run — the from-scratch path, which keys
and reads the whole trail (as after a settings change) — and then times the analysis (plus commit)
of every following run: the windowed path every new run takes. Medians over each block.

Last line: RESULT analysis_growth=<median of the last block / median of the block at the 100th>
  analysis_ms_100=<..> analysis_ms_last=<..> review_ms_100=<..> review_ms_last=<..> runs=<N>
(review_ms: the analysis without the run's own overhead computation, which is per run by design.)
Target: analysis_growth <= 2.
BENCH_SMOKE=1 (bench/sizes.py): 10 runs, blocks of 2 from the 3rd run; its numbers mean nothing.
"""

from __future__ import annotations

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

from infra.localstack import Postgres, Redis, migrate  # noqa: E402
from sizes import announce, size  # noqa: E402

RUNS = size(2000, smoke=10, env="BENCH_ANALYSIS_RUNS")
SAMPLES = size(300, smoke=30)
LOADS = (10, 20, 50)
SEED = 20261123
BLOCK = size(20, smoke=2, env="BENCH_ANALYSIS_BLOCK")
EARLY = size(99, smoke=2)    # the first block starts at the 100th run (0-based 99)


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
    announce("bench-analysis")
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
    from benchtrail.projects.schemas import ProjectCreate
    from benchtrail.projects.service import create_project
    from benchtrail.trails import analysis
    from benchtrail.uploads.endpoints import keep_and_record
    from benchtrail.uploads.files import RawSink, scratch_folder
    from benchtrail.uploads.service import KeptFiles, accept_upload, parse_metadata

    admin = Principal(token_id=1, project_id=None, role="admin", name="bench")
    with unit_of_work() as session:
        create_project(session, ProjectCreate(slug="bench", is_public=True))
    rng = np.random.default_rng(SEED)
    first_block = range(EARLY, EARLY + 1 + BLOCK)
    last_block = range(RUNS - BLOCK - 1, RUNS)
    timed: dict[str, list[tuple[float, float]]] = {"early": [], "late": []}
    started = time.perf_counter()
    for i in range(RUNS):
        step = 1.10 if i >= RUNS // 2 else 1.0
        meta = {"files": [{"variant": "baseline", "format": "benchtrail-json"},
                          {"variant": "agent", "format": "benchtrail-json"}],
                "agent_version": f"1.{i // 100}.{i % 100}", "reference": "baseline",
                "environment": {"cpus": 2, "os": "Linux"}}
        with scratch_folder() as workdir:
            received = []
            for name, data in (("baseline.json", result_file(rng, 1.0)), ("agent.json", result_file(rng, 1.05 * step))):
                sink = RawSink(name, workdir)
                sink.write(data)
                received.append(sink.finish())
            upload = parse_metadata(json.dumps(meta))
            kept = KeptFiles(upload.files, received)
            run_id = keep_and_record(kept, lambda session: accept_upload(session, admin, "bench", upload, kept, None)).id
        with unit_of_work() as session:
            ingest_run(session, run_id)
        block = "early" if i in first_block else "late" if i in last_block else None
        if block is None:
            if (i + 1) % 100 == 0:
                print(f"{i + 1} runs ingested, {time.perf_counter() - started:.0f} s", flush=True)
            continue
        first = i in (first_block[0], last_block[0])
        spent = {"overheads": 0.0}
        original = analysis.overhead_rows

        def timed_overheads(*a, **k):  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            try:
                return original(*a, **k)
            finally:
                spent["overheads"] += time.perf_counter() - t

        analysis.overhead_rows = timed_overheads
        t0 = time.perf_counter()
        with unit_of_work() as session:
            outcome = analysis.analyse_run(session, run_id, force=first)
        total = time.perf_counter() - t0
        analysis.overhead_rows = original
        if outcome is None or outcome.full != (outcome.trails_analysed if first else 0):
            raise SystemExit(f"run {i + 1}: expected the {'from-scratch' if first else 'windowed'} path: {outcome}")
        if not first:
            timed[block].append((total, total - spent["overheads"]))
            print(f"run {i + 1}: analysis {1000 * total:.0f} ms (review {1000 * (total - spent['overheads']):.0f} ms, "
                  f"{outcome.trails_analysed} trails)", flush=True)
    early = statistics.median(t for t, _ in timed["early"])
    late = statistics.median(t for t, _ in timed["late"])
    early_r = statistics.median(r for _, r in timed["early"])
    late_r = statistics.median(r for _, r in timed["late"])
    print(f"RESULT analysis_growth={late / early:.2f} analysis_ms_100={1000 * early:.0f} "
          f"analysis_ms_last={1000 * late:.0f} review_ms_100={1000 * early_r:.0f} review_ms_last={1000 * late_r:.0f} "
          f"runs={RUNS}")
    return 0



if __name__ == "__main__":
    raise SystemExit(main())

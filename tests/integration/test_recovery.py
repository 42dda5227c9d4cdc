"""Recovery: a worker killed with SIGKILL in the middle of a large ingest. On a stack of its own
(PostgreSQL, Redis, API, two workers, beat) the run is completed soon after the kill, with every cell
written exactly once. And a worker whose disk is full: the run waits for a worker with room instead of
failing.

The stacks sweep every 2 s and queue a stage again 5 s after it was queued (the product's defaults are 15 s
and 45 s): the same code paths, without waiting a minute for each. With the defaults, a killed ingest is
picked up within requeue delay + sweep interval (60 s) of its start, plus the ingest itself."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from infra.localstack import REPO, VENV_BIN, Postgres, Process, Redis, answers, beat_command, celery_worker, free_port, migrate, wait_until
from tests.support.jtl import independent_cells, write_jtl

RECOVERY_LIMIT_S = 60
# Sweeper settings of these stacks: short, so that a recovery takes seconds (see the module docstring).
FAST = {"BENCHTRAIL_SWEEPER_INTERVAL_S": "2", "BENCHTRAIL_STAGE_REQUEUE_AFTER_S": "5",
        "BENCHTRAIL_RUN_HEARTBEAT_TIMEOUT_S": "5"}


@contextlib.contextmanager
def _stack(logdir: Path, *, beat: bool = True, workers: int = 2, settings: dict[str, str] | None = None
           ) -> Iterator[dict]:
    """PostgreSQL, Redis, the API, and (as asked) beat and workers, with the FAST sweeper settings unless
    `settings` says otherwise. `stack["start"](proc)` adds a process the test starts itself to the
    ones stopped at the end."""
    pg, rd = Postgres().start(), Redis().start()
    data = Path(tempfile.mkdtemp(prefix="bt-recovery-"))
    migrate(pg.url)
    env = {k: v for k, v in os.environ.items()
           if k not in ("BENCHTRAIL_SWEEPER_INTERVAL_S", "BENCHTRAIL_RUN_HEARTBEAT_TIMEOUT_S",
                        "BENCHTRAIL_STAGE_REQUEUE_AFTER_S")}
    port = free_port()
    env.update({"BENCHTRAIL_DATABASE_URL": pg.url, "BENCHTRAIL_REDIS_URL": rd.url, "BENCHTRAIL_DATA_DIR": str(data),
                "BENCHTRAIL_PUBLIC_URL": f"http://127.0.0.1:{port}", "BENCHTRAIL_LOG_JSON": "true",
                "BENCHTRAIL_ENV": "test", **FAST, **(settings or {})})
    procs: list[Process] = []
    try:
        procs.append(Process("recovery-api", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory",
                                              "--host", "127.0.0.1", "--port", str(port)], env, logdir))
        if beat:
            procs.append(Process("recovery-beat", beat_command(VENV_BIN, data / "beat-schedule", supervised=False),
                                 env, logdir))
        started = [celery_worker(f"recovery-w{i}", env, logdir, concurrency=1) for i in range(1, workers + 1)]
        procs.extend(started)
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: answers(f"{url}/api/health", timeout=1), 30, "the API")
        out = subprocess.run([str(VENV_BIN / "benchtrail"), "admin", "create-token", "--role", "admin", "--name",
                              "recovery"], env=env, check=True, capture_output=True, text=True)
        yield {"url": url, "token": out.stdout.strip().splitlines()[-1], "workers": started, "pg": pg,
               "data": data, "redis": rd, "env": env, "start": procs.append}
    finally:
        for proc in procs:
            proc.stop()
        rd.stop()
        pg.stop()
        shutil.rmtree(data, ignore_errors=True)   # the stack's stored files: 3 folders left in /tmp per run before


@pytest.fixture()
def own_stack(logdir: Path) -> Iterator[dict]:
    with _stack(logdir) as stack:
        yield stack


def _row_locked(pg: Postgres, run_id: int) -> bool:
    """True while some transaction (the ingest) holds the run's row lock."""
    with psycopg.connect(f"host=127.0.0.1 port={pg.port} user=benchtrail dbname=benchtrail", autocommit=False) as c:
        got = c.execute("SELECT id FROM runs WHERE id = %s FOR UPDATE SKIP LOCKED", (run_id,)).fetchall()
        c.rollback()
        return not got


def _db(pg: Postgres, sql: str, *args: object) -> list[tuple]:
    with psycopg.connect(f"host=127.0.0.1 port={pg.port} user=benchtrail dbname=benchtrail") as c:
        return c.execute(sql, args).fetchall()


def test_sigkill_mid_ingest_recovers_within_a_minute_with_exact_cells(own_stack, scratch):
    url, token, pg = own_stack["url"], own_stack["token"], own_stack["pg"]
    per_group = 80_000  # 3 thread groups x 2 labels: 480,000 rows
    jtl = write_jtl(scratch / "big.jtl", seed=7, per_group=per_group)
    expected = independent_cells(jtl)
    rows = sum(e["count"] for e in expected.values())
    assert rows == 6 * per_group

    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as http:
        assert http.post("/api/v1/projects", json={"slug": "recovery", "name": "recovery"}).status_code == 201
        with jtl.open("rb") as fh:
            r = http.post("/api/v1/projects/recovery/runs",
                          data={"metadata": json.dumps({"files": [{"variant": "baseline"}]})},
                          files=[("files", ("big.jtl", fh))])
        assert r.status_code == 202, r.text
        slug, run_id = r.json()["run"], r.json()["id"]

        # The ingest has started and holds the run's lock: find which worker has it, and kill it.
        started = f'"run_id": {run_id}, "attempt": 0, "event": "ingest started"'
        victim = wait_until(lambda: next((w for w in own_stack["workers"] if started in w.output()), None), 60,
                            "a worker to start the ingest")
        wait_until(lambda: _row_locked(pg, run_id), 30, "the ingest to lock its run")
        os.killpg(victim.proc.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        victim.proc.wait(10)
        survivor = next(w for w in own_stack["workers"] if w is not victim)

        # Killed mid-ingest: still ingesting, and nothing of it was written.
        assert http.get(f"/api/v1/runs/{slug}").json()["status"] == "ingesting"
        assert _db(pg, "SELECT count(*) FROM cells WHERE run_id = %s", run_id) == [(0,)]

        run = wait_until(lambda: (b := http.get(f"/api/v1/runs/{slug}").json())["status"] != "ingesting" and b,
                         RECOVERY_LIMIT_S + 30, "the run to leave ingesting")
        elapsed = time.monotonic() - killed_at
        assert run["status"] == "completed", run["status_detail"]
        assert elapsed < RECOVERY_LIMIT_S, f"completed {elapsed:.0f} s after the kill"
        # The survivor did the ingest. It logs so just after its commit, which the API may show first.
        wait_until(lambda: f'"run_id": {run_id}, "event": "ingested"' in survivor.output(), 30,
                   "the surviving worker to log the ingest")
        # The analysis of the recovered run is not left pending either.
        wait_until(lambda: http.get(f"/api/v1/runs/{slug}").json()["analysis_status"] != "pending", 90,
                   "the analysis to finish")
        assert http.get(f"/api/v1/runs/{slug}").json()["analysis_status"] == "done"

    # Exactly once: one cell per (label, thread group), counts equal to the file's rows.
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {ld["id"]: ld for ld in run["loads"]}
    cells = [c for c in run["cells"] if scenarios[c["scenario_id"]] != "*"]
    keys = [(scenarios[c["scenario_id"]], int(loads[c["load_id"]]["value"])) for c in cells]
    assert sorted(keys) == sorted(expected), "a cell is missing or written twice"
    for c, key in zip(cells, keys):
        assert c["count"] == expected[key]["count"]
        assert c["errors"] == expected[key]["errors"]
    assert sum(c["count"] for c in cells) == rows
    assert _db(pg, "SELECT count(*) FROM runs") == [(1,)]
    assert _db(pg, "SELECT count(*), count(DISTINCT (variant_id, scenario_id, load_id, mode)) FROM cells "
                   "WHERE run_id = %s", run_id)[0][0] == len(run["cells"])


def test_a_full_disk_in_the_worker_delays_the_ingest_and_never_fails_the_run(logdir, scratch):
    """The only worker's disk refuses its scratch files (a 2 MB file-size limit on its process, so the
    3.7 MB a gzip upload decompresses to cannot be written): the run stays ingesting with nothing written
    and the ingest is retried; once a worker with room takes the retry, the run completes exactly."""
    jtl = write_jtl(scratch / "big.jtl", seed=12, per_group=5_000)
    expected = independent_cells(jtl)
    packed = gzip.compress(jtl.read_bytes())
    assert jtl.stat().st_size > 3 << 20 and len(packed) < 1 << 20
    with _stack(logdir, beat=False, workers=0) as stack:
        cramped = celery_worker("recovery-full-disk", stack["env"], logdir, concurrency=1,
                                wrapper=("prlimit", f"--fsize={2 << 20}"))
        stack["start"](cramped)
        headers = {"Authorization": f"Bearer {stack['token']}"}
        with httpx.Client(base_url=stack["url"], headers=headers, timeout=60) as http:
            assert http.post("/api/v1/projects", json={"slug": "full", "name": "full"}).status_code == 201
            r = http.post("/api/v1/projects/full/runs", data={"metadata": json.dumps({"files": [{"variant": "b"}]})},
                          files=[("files", ("big.jtl.gz", packed))])
            assert r.status_code == 202, r.text
            slug, run_id = r.json()["run"], r.json()["id"]
            wait_until(lambda: cramped.output().count("the disk refused a file") >= 2, 60,
                       "the ingest to be refused by the disk twice (a retry)")
            run = http.get(f"/api/v1/runs/{slug}").json()
            assert run["status"] == "ingesting", run["status_detail"]
            assert _db(stack["pg"], "SELECT count(*) FROM cells WHERE run_id = %s", run_id) == [(0,)]

            cramped.stop()   # its pending retry goes back to the queue
            stack["start"](celery_worker("recovery-roomy", stack["env"], logdir, concurrency=1))
            run = wait_until(lambda: (b := http.get(f"/api/v1/runs/{slug}").json())["status"] != "ingesting" and b,
                             90, "the run to leave ingesting")
        assert run["status"] == "completed", run["status_detail"]
        scenarios = {sc["id"]: sc["name"] for sc in run["scenarios"]}
        loads = {ld["id"]: ld for ld in run["loads"]}
        got = {(scenarios[c["scenario_id"]], int(loads[c["load_id"]]["value"])): c["count"]
               for c in run["cells"] if scenarios[c["scenario_id"]] != "*"}
        assert got == {key: e["count"] for key, e in expected.items()}


def test_lost_analysis_is_queued_again_but_not_one_in_progress(client, worker, infra):
    """A completed run whose analysis job was lost (its retries gave up while the database was down,
    its worker died) is analysed after the sweeper runs; one whose analysis holds the run is left alone."""
    import uuid
    from datetime import datetime, timedelta, timezone

    from sqlalchemy import create_engine, select, text

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Project, Run
    from benchtrail_worker.tasks.sweeper import sweep

    long_ago = datetime.now(timezone.utc) - timedelta(minutes=10)
    with unit_of_work() as session:
        project = Project(slug=f"lost-{uuid.uuid4().hex[:8]}", name="lost", description="", is_public=True,
                          settings={})
        session.add(project)
        session.flush()
        ids = []
        for _ in range(2):
            run = Run(slug=uuid.uuid4().hex[:12], project_id=project.id, source="upload", status="completed",
                      analysis_status="pending", finished_at=long_ago, heartbeat_at=long_ago, labels={}, meta={},
                      validity=[], criteria=[], progress={})
            session.add(run)
            session.flush()
            ids.append(run.id)
    lost, busy = ids
    engine = create_engine(infra["BENCHTRAIL_DATABASE_URL"])
    try:
        with engine.connect() as holder:  # as an analysis in progress does: the run's row lock
            holder.execute(text("SELECT id FROM runs WHERE id = :id FOR UPDATE"), {"id": busy})
            sweep.run()

            def status(run_id: int) -> str:
                with unit_of_work() as session:
                    return session.scalar(select(Run.analysis_status).where(Run.id == run_id))

            wait_until(lambda: status(lost) == "done", 60, "the lost analysis to be done")
            assert status(busy) == "pending"
            holder.rollback()
        # Released (the analysis "died"): the next sweep picks it up once it is overdue.
        with unit_of_work() as session:
            session.get(Run, busy).heartbeat_at = long_ago
        sweep.run()
        wait_until(lambda: status(busy) == "done", 60, "the second analysis to be done")
    finally:
        engine.dispose()


def test_analysis_interrupted_by_a_database_restart_is_done_after_it_comes_back(own_stack):
    """The analysis of a run is sent while PostgreSQL is down; its retries may give up before the
    database is back. Once it is back, the analysis is done within a minute, never left pending."""
    import uuid
    from datetime import datetime, timezone

    from celery import Celery
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from benchtrail.models import Project, Run

    pg = own_stack["pg"]
    engine = create_engine(pg.url)
    try:
        with Session(engine) as session, session.begin():
            project = Project(slug="outage", name="outage", description="", is_public=True, settings={})
            session.add(project)
            session.flush()
            now = datetime.now(timezone.utc)
            run = Run(slug=uuid.uuid4().hex[:12], project_id=project.id, source="upload", status="completed",
                      analysis_status="pending", finished_at=now, heartbeat_at=now, labels={}, meta={},
                      validity=[], criteria=[], progress={})
            session.add(run)
            session.flush()
            run_id = run.id
    finally:
        engine.dispose()

    script = str(REPO / "infra/scripts/postgres.sh")
    subprocess.run([script, "stop", str(pg.dir), str(pg.port)], check=True)
    try:
        Celery("outage-test", broker=own_stack["redis"].url).send_task("analysis.run", args=[run_id],
                                                                       queue="analysis")
        interrupted = f'"run_id": {run_id}, "error"'
        wait_until(lambda: sum(w.output().count(interrupted) for w in own_stack["workers"]) >= 2, 90,
                   "the analysis to fail on the stopped database at least twice")
    finally:
        subprocess.run([script, "start", str(pg.dir), str(pg.port)], check=True)
    back = time.monotonic()
    wait_until(lambda: _db(pg, "SELECT analysis_status FROM runs WHERE id = %s", run_id) == [("done",)],
               RECOVERY_LIMIT_S, "the analysis to be done after the database came back")
    assert time.monotonic() - back < RECOVERY_LIMIT_S


def _queued_ingests(redis_port: int) -> list[int]:
    """The run ids of the ingest jobs waiting in the broker's `ingest` list, decoded here from Celery's
    message format (JSON envelope, base64 JSON body `[args, kwargs, embed]`)."""
    import base64

    import redis

    ids = []
    for item in redis.Redis(port=redis_port).lrange("ingest", 0, -1):
        message = json.loads(item)
        assert message["headers"]["task"] == "results.ingest"
        ids.append(json.loads(base64.b64decode(message["body"]))[0][0])
    return sorted(ids)


def test_a_backlog_is_queued_once_and_a_lost_job_again(logdir, scratch):
    """Uploads wait in the broker's queue longer than the re-queue delay (no worker takes ingests yet,
    as in a burst of uploads): the sweeper, running all along, leaves them alone, so each run's job is
    queued once, not once more per sweep. Jobs lost with the broker are queued again, once. A worker
    started afterwards ingests every run, each exactly once."""
    fast = {"BENCHTRAIL_SWEEPER_INTERVAL_S": "1", "BENCHTRAIL_STAGE_REQUEUE_AFTER_S": "2"}
    with _stack(logdir, workers=0, settings=fast) as stack:
        port = stack["redis"].port
        # Beat's sweeps run on the default queue; this worker takes nothing else.
        sweeper = celery_worker("backlog-default", stack["env"], logdir, queues="default", concurrency=1)
        stack["start"](sweeper)
        jtl = write_jtl(scratch / "small.jtl", seed=11, per_group=30)
        with httpx.Client(base_url=stack["url"], headers={"Authorization": f"Bearer {stack['token']}"},
                          timeout=60) as http:
            assert http.post("/api/v1/projects", json={"slug": "backlog", "name": "backlog"}).status_code == 201
            ids, slugs = [], []
            for _ in range(3):
                r = http.post("/api/v1/projects/backlog/runs",
                              data={"metadata": json.dumps({"files": [{"variant": "baseline"}]})},
                              files=[("files", ("small.jtl", jtl.read_bytes()))])
                assert r.status_code == 202, r.text
                ids.append(r.json()["id"])
                slugs.append(r.json()["run"])
            assert _queued_ingests(port) == sorted(ids)

            def sweeps() -> int:
                return sweeper.output().count("Task runs.sweep[") // 2   # received + succeeded

            def overdue() -> bool:   # every run queued longer ago than the re-queue delay (2 s), by the database's clock
                return _db(stack["pg"], "SELECT count(*) FROM runs WHERE heartbeat_at < now() - interval '2 s'") \
                    == [(len(ids),)]

            # Every run is overdue and no worker holds it: four sweeps later, still queued once each.
            wait_until(overdue, 30, "the runs to be overdue")
            seen = sweeps()
            wait_until(lambda: sweeps() >= seen + 4, 60, "four sweeps")
            assert _queued_ingests(port) == sorted(ids), "the sweeper queued a waiting job again"

            # The jobs are lost (as with a broker that restarted without them): queued again, once each.
            subprocess.run(["redis-cli", "-p", str(port), "del", "ingest"], check=True, capture_output=True)
            wait_until(lambda: _queued_ingests(port) == sorted(ids), 60, "the lost jobs to be queued again")
            wait_until(overdue, 30, "the runs to be overdue again")
            seen = sweeps()
            wait_until(lambda: sweeps() >= seen + 3, 60, "three more sweeps")
            assert _queued_ingests(port) == sorted(ids)

            ingester = celery_worker("backlog-ingest", stack["env"], logdir, queues="ingest,analysis",
                                     concurrency=1)
            stack["start"](ingester)
            expected = independent_cells(jtl)
            for slug in slugs:
                run = wait_until(lambda s=slug: (b := http.get(f"/api/v1/runs/{s}").json())["status"] != "ingesting"
                                 and b, 60, "the backlog to be ingested")
                assert run["status"] == "completed", run["status_detail"]
                scenarios = {x["id"]: x["name"] for x in run["scenarios"]}
                loads = {x["id"]: int(x["value"]) for x in run["loads"]}
                assert {(scenarios[c["scenario_id"]], loads[c["load_id"]]): c["count"] for c in run["cells"]
                        if scenarios[c["scenario_id"]] != "*"} == {k: e["count"] for k, e in expected.items()}
            log = ingester.output()
            for run_id in ids:
                assert log.count(f'"run_id": {run_id}, "event": "ingested"') == 1
            assert "ingest skipped" not in log, "a duplicate job was queued"

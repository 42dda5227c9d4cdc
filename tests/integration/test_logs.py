"""Logs: a real Celery worker writes one JSON object per line, each with the level it was logged at."""

from __future__ import annotations

import json
import os
import signal
import uuid
from datetime import datetime, timedelta, timezone

from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from benchtrail.models import Project, Run
from infra.localstack import VENV_BIN, Postgres, Process, Redis, answers, celery_worker, free_port, migrate, wait_until


def _lines(text: str) -> list[dict]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise AssertionError(f"log line {number} is not JSON: {line!r}") from None
        assert isinstance(record, dict), f"log line {number} is not an object: {line!r}"
        assert record.get("level") in {"debug", "info", "warning", "error", "critical"}, line
        out.append(record)
    return out


def test_worker_log_lines_are_json_with_real_levels(infra, logdir):
    """A stuck run makes the sweeper log a warning; the task's own success is Celery's info line.
    The worker has a database and a broker of its own, so no other sweeper (the session's beat) can
    sweep the run first."""
    pg = Postgres().start()
    migrate(pg.url)
    engine = create_engine(pg.url)
    with Session(engine) as session, session.begin():
        project = Project(slug=f"logs-{uuid.uuid4().hex[:8]}", name="logs", description="", is_public=True,
                          settings={})
        session.add(project)
        session.flush()
        long_ago = datetime.now(timezone.utc) - timedelta(hours=1)
        run = Run(slug=uuid.uuid4().hex[:12], project_id=project.id, source="manual", status="running",
                  started_at=long_ago, heartbeat_at=long_ago, labels={}, meta={}, validity=[], criteria=[],
                  progress={})
        session.add(run)
        session.flush()
        run_id = run.id
    broker = Redis().start()
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")},
           "BENCHTRAIL_REDIS_URL": broker.url, "BENCHTRAIL_DATABASE_URL": pg.url}
    proc = celery_worker(f"logs-{uuid.uuid4().hex[:6]}", env, logdir, queues="default", concurrency=1)
    try:
        from celery import Celery

        sender = Celery("logs-test", broker=broker.url)
        sender.send_task("runs.sweep", queue="default")
        wait_until(lambda: "runs.sweep" in proc.output() and "succeeded" in proc.output(), 60,
                   "the sweep task to finish")
        with Session(engine) as session:
            assert session.get(Run, run_id).status == "failed"
    finally:
        proc.stop()
        broker.stop()
        engine.dispose()
        pg.stop()

    records = _lines(proc.output())
    by_event = {r["event"]: r for r in records}
    swept = [r for r in records if r["event"] == "swept stuck runs"]
    assert swept and swept[0]["level"] == "warning" and run_id in swept[0]["run_ids"], by_event.keys()
    # Celery's own lines are JSON too, with their level and logger, and never wrapped in another level.
    ready = [r for r in records if r["event"].endswith(" ready.")]
    assert ready and ready[0]["level"] == "info" and ready[0]["logger"].startswith("celery"), records[:5]
    succeeded = [r for r in records if "runs.sweep" in r["event"] and "succeeded" in r["event"]]
    assert succeeded and succeeded[0]["level"] == "info"
    assert not any("ForkPoolWorker" in r["event"] or r["event"].lstrip().startswith("{") for r in records)


def test_api_server_log_lines_are_json_with_real_levels(infra, logdir):
    """The production server (`benchtrail-api`, two worker processes): its process manager's lines as
    well as the app's are JSON, each with its level."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")}, "BENCHTRAIL_PUBLIC_URL": url}
    proc = Process(f"api-logs-{uuid.uuid4().hex[:6]}", [str(VENV_BIN / "benchtrail-api"), "--port", str(port),
                                                         "--workers", "2"], env, logdir)
    try:
        wait_until(lambda: answers(f"{url}/api/health"), 300, "the API")
    finally:
        proc.stop(signal.SIGTERM)
    records = _lines(proc.output())
    events = [r["event"] for r in records]
    assert any(e.startswith("Started parent process") for e in events), events
    assert any(e.startswith("Uvicorn running on") for e in events), events
    assert all(r["level"] == "info" for r in records if r["event"].startswith("Started")), records

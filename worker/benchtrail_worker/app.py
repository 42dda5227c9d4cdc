"""The Celery app of the worker, the runner and beat.

Queues are declared, never created on the fly (task_create_missing_queues=False): `ingest`,
`analysis`, `default`, and `runner.<pool>` for a runner started with BENCHTRAIL_RUNNER_POOLS.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone

import celery.apps.worker as celery_worker_app
from celery import Celery, signals
from kombu import Queue

from benchtrail import logging as applog
from benchtrail.config import get_settings
from benchtrail.jobs import TASK_QUEUES

settings = get_settings()
applog.configure(json=settings.log_json)

BASE_QUEUES = ("ingest", "analysis", "default")
RUNNER_POOLS = [p for p in os.environ.get("BENCHTRAIL_RUNNER_POOLS", "").split(",") if p]

app = Celery("benchtrail", broker=settings.redis_url)
app.conf.update(
    task_serializer="json",
    accept_content=["json"],
    task_create_missing_queues=False,
    task_queues=[Queue(q) for q in BASE_QUEUES] + [Queue(f"runner.{p}") for p in RUNNER_POOLS],
    task_default_queue="default",
    task_routes={name: {"queue": queue} for name, queue in TASK_QUEUES.items()},
    task_acks_late=True,
    task_reject_on_worker_lost=False,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    # Longer than the longest load test, so Redis never redelivers a run that is still going.
    broker_transport_options={"visibility_timeout": 6 * 3600},
    # Logging is ours (setup_logging below): no Celery handlers, no stdout redirected into a logger.
    worker_hijack_root_logger=False,
    worker_redirect_stdouts=False,
    beat_schedule={
        "sweep-stuck-runs": {"task": "runs.sweep", "schedule": float(settings.sweeper_interval_s),
                             "options": {"queue": "default"}},
        "fire-due-schedules": {"task": "schedules.fire", "schedule": 20.0, "options": {"queue": "default"}},
    },
)


@signals.setup_logging.connect
def _setup_logging(loglevel: int | str | None = None, **_: object) -> None:
    """Celery (worker, runner, beat) asks how to log: our JSON handler at the level of --loglevel."""
    applog.configure(json=settings.log_json, level=loglevel or "INFO")


@signals.celeryd_after_setup.connect
def _no_banner(sender: str, instance: object, conf: object, **_: object) -> None:
    """The multi-line start-up banner would be the only non-JSON output: log it as one event instead."""
    setattr(instance, "quiet", True)
    applog.log.info("worker starting", node=sender)


def _say_as_json(msg: str, f: object = None) -> None:
    """Celery writes its shutdown notices straight to a file descriptor from signal handlers
    (celery.apps.worker.safe_say); write them as JSON lines instead, still without locks."""
    text = str(msg).strip()
    level = "warning" if any(w in text.lower() for w in ("cold", "terminat", "restart")) else "info"
    line = json.dumps({"event": text, "level": level, "logger": "celery.apps.worker",
                       "timestamp": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")})
    try:
        os.write(getattr(f, "fileno", sys.__stdout__.fileno)(), (line + "\n").encode())
    except (OSError, ValueError, AttributeError):
        pass


celery_worker_app.safe_say = _say_as_json

import benchtrail_worker.tasks  # noqa: E402,F401  (registers every task)

"""The Celery configuration of the server's worker and beat: broker, declared queues, routes, the beat
schedule and our JSON logging. It imports no task: beat (`benchtrail_worker.beat`) sends its two tasks by
name and never loads the worker's code (scipy, polars, the ingest and analysis modules: two thirds of a
worker's start)."""

from __future__ import annotations

from celery import Celery
from kombu import Queue

from benchtrail.config import get_settings
from benchtrail.jobs import TASK_QUEUES
from benchtrail_runner.celeryconf import COMMON_CONF, install_logging

BASE_QUEUES = ("ingest", "analysis", "default")


def make_app() -> Celery:
    settings = get_settings()
    install_logging(settings.log_json)
    app = Celery("benchtrail", broker=settings.redis_url)
    app.conf.update(
        COMMON_CONF,
        task_queues=[Queue(q) for q in BASE_QUEUES],
        task_default_queue="default",
        task_routes={name: {"queue": queue} for name, queue in TASK_QUEUES.items()},
        beat_schedule={
            "sweep-stuck-runs": {"task": "runs.sweep", "schedule": float(settings.sweeper_interval_s),
                                 "options": {"queue": "default"}},
            "fire-due-schedules": {"task": "schedules.fire", "schedule": 20.0, "options": {"queue": "default"}},
        },
    )
    return app

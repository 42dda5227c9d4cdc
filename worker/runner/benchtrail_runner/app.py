"""The runner's Celery app: it consumes only `runner.<pool>` queues (BENCHTRAIL_RUNNER_POOLS) and
knows one task, `runs.execute`. It needs the broker URL, the API URL and a runner token; nothing
of the server (`benchtrail-runner start` runs it under `benchtrail-supervise`)."""

from __future__ import annotations

from celery import Celery
from kombu import Queue

from .celeryconf import COMMON_CONF, install_logging
from .config import get_settings

settings = get_settings()
install_logging(settings.log_json)

app = Celery("benchtrail", broker=settings.broker_url)
app.conf.update(
    COMMON_CONF,
    task_queues=[Queue(q) for q in settings.queues],
    task_default_queue=settings.queues[0] if settings.queues else "runner.default",
)

from . import tasks  # noqa: E402,F401  (registers runs.execute)

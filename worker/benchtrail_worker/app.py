"""The Celery app of the worker and beat.

Queues are declared, never created on the fly (task_create_missing_queues=False): `ingest`,
`analysis`, `default`. Load tests run on runners, a separate install with its own app
(`benchtrail_runner.app`, queues `runner.<pool>`).
"""

from __future__ import annotations

from celery import Celery, signals
from kombu import Queue

from benchtrail.config import get_settings
from benchtrail.jobs import TASK_QUEUES
from benchtrail.runstate import events  # noqa: F401  (publishes every committed change of a run, see there)
from benchtrail_runner.celeryconf import COMMON_CONF, install_logging

settings = get_settings()
install_logging(settings.log_json)

BASE_QUEUES = ("ingest", "analysis", "default")

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


@signals.worker_init.connect
def _temp_files_on_data_disk(**_: object) -> None:
    """In the worker's main process, before its pool forks (the children inherit it)."""
    from benchtrail.storage import temp_files_on_data_disk

    temp_files_on_data_disk()


import benchtrail_worker.tasks  # noqa: E402,F401  (registers every task)

"""The Celery app of the worker: the configuration every server-side Celery process shares
(`benchtrail_worker.conf`) and every task. Beat runs `benchtrail_worker.beat`, the same configuration
without the tasks.

Queues are declared, never created on the fly (task_create_missing_queues=False): `ingest`,
`analysis`, `default`. Load tests run on runners, a separate install with its own app
(`benchtrail_runner.app`, queues `runner.<pool>`).
"""

from __future__ import annotations

from celery import signals

from benchtrail.runstate import events  # noqa: F401  (publishes every committed change of a run, see there)
from benchtrail_worker.conf import make_app

app = make_app()


@signals.worker_init.connect
def _temp_files_on_data_disk(**_: object) -> None:
    """In the worker's main process, before its pool forks (the children inherit it)."""
    from benchtrail.storage import temp_files_on_data_disk

    temp_files_on_data_disk()


import benchtrail_worker.tasks  # noqa: E402,F401  (registers every task)

"""One task decorator: explicit name and queue, retries with backoff only for transient failures,
soft and hard time limits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from sqlalchemy.exc import OperationalError

from benchtrail.jobs import TASK_QUEUES
from benchtrail.storage import StorageError
from benchtrail_worker.app import app

# StorageError: the raw file store (an S3-compatible bucket) could not be read; the sweeper re-queues too.
TRANSIENT = (OperationalError, redis.ConnectionError, redis.TimeoutError, ConnectionError, StorageError)


def task(name: str, queue: str, *, soft_time_limit: int = 300, time_limit: int = 330,
         max_retries: int = 5, retry: bool = True) -> Callable[[Callable[..., Any]], Any]:
    """`queue` is the queue the task is declared for; routing itself comes from `jobs.TASK_QUEUES`
    (the one table the API and the worker share), and a mismatch is a programming error. Runner
    tasks (`runner.*`) are sent to their pool's queue explicitly."""
    if not queue.startswith("runner.") and TASK_QUEUES.get(name) != queue:
        raise ValueError(f"task {name} declares queue {queue!r} but jobs.TASK_QUEUES routes it to "
                         f"{TASK_QUEUES.get(name)!r}")
    return app.task(
        name=name, bind=True,
        autoretry_for=TRANSIENT if retry else (),
        retry_backoff=True, retry_backoff_max=60, retry_jitter=True,
        max_retries=max_retries if retry else 0,
        soft_time_limit=soft_time_limit, time_limit=time_limit, acks_late=True,
    )

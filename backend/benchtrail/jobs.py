"""Enqueue background work by task name, only after the transaction that caused it commits.

The API never imports worker code: it sends task names through a producer-only Celery app. Jobs are
buffered on the SQLAlchemy session and sent by the boundary after commit; a rollback drops them.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from celery import Celery
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError
from sqlalchemy.orm import Session

from benchtrail.config import get_settings
from benchtrail.logging import log

# Task name -> queue. The worker declares the same routes (benchtrail_worker.app).
TASK_QUEUES: dict[str, str] = {
    "results.ingest": "ingest",
    "analysis.run": "analysis",
    "notifications.deliver": "default",
    "runs.sweep": "default",
    "schedules.fire": "default",
    "runs.rerun": "default",
}


@lru_cache
def producer() -> Celery:
    app = Celery("benchtrail", broker=get_settings().redis_url)
    app.conf.update(broker_connection_retry_on_startup=True, task_serializer="json")
    return app


@dataclass(slots=True)
class Job:
    name: str
    args: list[Any]
    queue: str
    kwargs: dict[str, Any] = field(default_factory=dict)


def enqueue(session: Session, name: str, *args: Any, queue: str | None = None, **kwargs: Any) -> None:
    """Buffer a task; it is sent when the session's transaction commits (see `send_buffered`)."""
    if queue is None:
        queue = TASK_QUEUES[name]
    session.info.setdefault("jobs", []).append(Job(name, list(args), queue, kwargs))


def send_buffered(session: Session) -> None:
    """Send after commit. A broker outage must not turn a committed request into an error: the work
    is recorded in the database and beat's sweeper queues what never ran."""
    jobs: list[Job] = session.info.pop("jobs", [])
    for job in jobs:
        try:
            producer().send_task(job.name, args=job.args, kwargs=job.kwargs, queue=job.queue,
                                 retry=True, retry_policy={"max_retries": 2, "interval_start": 0.2,
                                                           "interval_step": 0.5})
        except (OperationalError, OSError) as exc:
            log.error("job not sent; the sweeper will queue it again", task=job.name, args=job.args,
                      error=f"{type(exc).__name__}: {exc}")


def drop_buffered(session: Session) -> None:
    session.info.pop("jobs", None)


# A queue longer than this is not read through (see `waiting`).
WAITING_SCAN_LIMIT = 20_000


def waiting(name: str) -> set[Any] | None:
    """The first argument (a run id for ingest and analysis) of every `name` job still waiting in its
    queue on the broker, not yet taken by a worker. Read from the Redis list Celery's messages wait in
    (protocol 2: the task's name in the headers, `[args, kwargs, embed]` as the base64 JSON body). None
    when the broker cannot be read or the queue holds more than WAITING_SCAN_LIMIT messages: then nobody
    knows what is waiting."""
    queue = TASK_QUEUES[name]
    try:
        with producer().connection_for_read() as conn:
            client = conn.default_channel.client
            if client.llen(queue) > WAITING_SCAN_LIMIT:
                return None
            raw = client.lrange(queue, 0, -1)
    except (OperationalError, OSError, RedisError) as exc:
        log.warning("the broker's queue could not be read", queue=queue, error=f"{type(exc).__name__}: {exc}")
        return None
    found: set[Any] = set()
    for item in raw:
        try:
            message = json.loads(item)
            if message["headers"]["task"] != name:
                continue
            body = message["body"]
            if message["properties"].get("body_encoding") == "base64":
                body = base64.b64decode(body)
            found.add(json.loads(body)[0][0])
        except (ValueError, KeyError, TypeError, IndexError):
            continue   # not a Celery protocol-2 JSON message with an argument: not one of ours
    return found

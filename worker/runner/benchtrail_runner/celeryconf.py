"""What every Celery app of ours shares (the server's worker and beat, and the runner): JSON
serialization, declared queues only, late acknowledgement, and our JSON logging instead of Celery's."""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from typing import Any

import celery.apps.worker as celery_worker_app
from celery import signals

from . import logs

# Longer than the longest load test, so Redis never redelivers a run that is still going.
VISIBILITY_TIMEOUT_S = 6 * 3600

COMMON_CONF: dict[str, Any] = {
    "task_serializer": "json",
    "accept_content": ["json"],
    "task_create_missing_queues": False,
    "task_acks_late": True,
    "task_reject_on_worker_lost": False,
    "worker_prefetch_multiplier": 1,
    "broker_connection_retry_on_startup": True,
    "broker_transport_options": {"visibility_timeout": VISIBILITY_TIMEOUT_S},
    # Logging is ours (install_logging): no Celery handlers, no stdout redirected into a logger.
    "worker_hijack_root_logger": False,
    "worker_redirect_stdouts": False,
}


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


def install_logging(json_lines: bool) -> None:
    """Our JSON handler for every Celery process, at the level of --loglevel; no banner."""
    logs.configure(json=json_lines)

    @signals.setup_logging.connect(weak=False)
    def _setup_logging(loglevel: int | str | None = None, **_: object) -> None:
        logs.configure(json=json_lines, level=loglevel or "INFO")

    @signals.celeryd_after_setup.connect(weak=False)
    def _no_banner(sender: str, instance: object, conf: object, **_: object) -> None:
        # The multi-line start-up banner would be the only non-JSON output: log it as one event instead.
        setattr(instance, "quiet", True)
        logs.log.info("worker starting", node=sender)

    celery_worker_app.safe_say = _say_as_json

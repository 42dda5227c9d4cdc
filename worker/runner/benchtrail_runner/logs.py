"""Structured logs: one JSON object per line (or key=value in a terminal), shared by all processes.

Our own events (structlog) and every standard-library logger (Celery, uvicorn, SQLAlchemy, Python
warnings) go through ONE handler on the root logger, so each event is one line with its real level:
`{"event": "...", "level": "warning", "logger": "...", "timestamp": "..."}`. The worker, runners and
beat install it through Celery's `setup_logging` signal (benchtrail_worker/app.py, benchtrail_runner/app.py), so Celery neither
adds its own handlers nor redirects stdout into a logger (which used to wrap our lines as
`WARNING/ForkPoolWorker-1] {...}`).
"""

from __future__ import annotations

import logging
import sys

import structlog

# Loggers that install their own handlers (uvicorn) or chatter at INFO about every HTTP call.
_OWN_HANDLERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "celery", "celery.task", "celery.redirected")
_QUIET = {"httpx": logging.WARNING, "httpcore": logging.WARNING}


def _level_name(level: int | str) -> int:
    if isinstance(level, str):
        return logging.getLevelName(level.upper()) if not level.isdigit() else int(level)
    return level or logging.INFO


def configure(json: bool = True, level: int | str = logging.INFO) -> None:
    level = _level_name(level)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False))
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        # Records from standard-library loggers: their level, logger name and time.
        foreign_pre_chain=[structlog.stdlib.add_log_level, structlog.stdlib.add_logger_name, timestamper],
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info, renderer],
    ))
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in _OWN_HANDLERS:
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
    # billiard (Celery's process pool) logs to "multiprocessing" with propagate off: give it our handler.
    pool = logging.getLogger("multiprocessing")
    pool.handlers = [handler]
    pool.propagate = False
    for name, quiet in _QUIET.items():
        logging.getLogger(name).setLevel(max(quiet, level))
    logging.captureWarnings(True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            timestamper,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )


log = structlog.get_logger("benchtrail")

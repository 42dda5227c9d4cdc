"""The test harness's stack pieces live in `infra/localstack.py` (shared with `make up` and the
benchmarks); this module re-exports them for code written before the move. Import from
`infra.localstack`."""

from infra.localstack import (REPO, VENV_BIN, Postgres, Process, Redis, celery_worker, free_port, migrate,
                              wait_until)

__all__ = ["REPO", "VENV_BIN", "Postgres", "Process", "Redis", "celery_worker", "free_port", "migrate", "wait_until"]

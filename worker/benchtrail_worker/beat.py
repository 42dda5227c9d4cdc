"""The Celery app beat runs (`celery -A benchtrail_worker.beat beat`): the worker's configuration and
schedule (`benchtrail_worker.conf`) without its tasks, which beat only names. A beat started with
`benchtrail_worker.app` works as well, and loads every task module for nothing."""

from __future__ import annotations

from benchtrail_worker.conf import make_app

app = make_app()

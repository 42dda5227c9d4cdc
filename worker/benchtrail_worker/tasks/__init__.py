from benchtrail_worker.tasks import ingest, runs, schedules, sweeper  # noqa: F401

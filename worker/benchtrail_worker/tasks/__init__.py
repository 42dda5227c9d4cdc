from benchtrail_worker.tasks import ingest, sweeper  # noqa: F401

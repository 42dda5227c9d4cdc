from benchtrail_worker.tasks import ingest, schedules, sweeper  # noqa: F401
from benchtrail_worker.tasks import analysis, notifications  # noqa: F401

"""Beat-driven work on the default queue: firing due schedules, and confirmation re-runs."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from benchtrail.db_boundary import unit_of_work
from benchtrail.logging import log
from benchtrail.models import Plan, Project, Run
from benchtrail.plans import service
from benchtrail.plans.schemas import StartRun
from benchtrail_worker.policy import task


@task("schedules.fire", "default", soft_time_limit=60, time_limit=90)
def fire(self: Any) -> list[str]:
    with unit_of_work() as session:
        runs = service.fire_due(session, datetime.now(timezone.utc))
        slugs = [r.slug for r in runs]
    if slugs:
        log.info("schedules fired", runs=slugs)
    return slugs


@task("runs.rerun", "default", soft_time_limit=60, time_limit=90)
def rerun(self: Any, run_id: int) -> str | None:
    """One confirmation re-run of the plan version a suspicious scheduled run used."""
    with unit_of_work() as session:
        original = session.get(Run, run_id)
        if original is None or original.plan_id is None:
            return None
        if (original.labels or {}).get("confirmation_of"):
            return None  # a confirmation is never confirmed again
        plan, project = session.get(Plan, original.plan_id), session.get(Project, original.project_id)
        if plan is None or project is None:
            return None
        run = service.start_run(session, project, plan, StartRun(
            agent_version=original.agent_version, app_version=original.app_version, commit=original.commit,
            branch=original.branch, labels={**(original.labels or {}), "confirmation_of": original.slug}),
            source=original.source)
        return run.slug

"""A run as lists show it (runs list, a plan's runs, a started run): its identity, versions, status and permalink."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from benchtrail.config import get_settings
from benchtrail.models import Project, Run


class RunSummary(BaseModel):
    id: int
    slug: str
    project: str
    source: str
    tool: str | None
    status: str
    is_valid: bool
    agent_version: str | None
    app_version: str | None
    commit: str | None
    branch: str | None
    labels: dict[str, str]
    environment: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    permalink: str


def permalink(run: Run) -> str:
    return f"{get_settings().public_url.rstrip('/')}/r/{run.slug}"


def summary(run: Run, project: Project, env_name: str | None) -> RunSummary:
    return RunSummary(id=run.id, slug=run.slug, project=project.slug, source=run.source, tool=run.tool,
                      status=run.status, is_valid=run.is_valid, agent_version=run.agent_version,
                      app_version=run.app_version, commit=run.commit, branch=run.branch, labels=run.labels,
                      environment=env_name, created_at=run.created_at, started_at=run.started_at,
                      finished_at=run.finished_at, permalink=permalink(run))

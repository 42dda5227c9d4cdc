from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from benchtrail.validation import SafeModel


class PlanOut(BaseModel):
    id: int
    name: str
    version: int
    pool: str
    body: dict[str, Any]
    source_yaml: str | None = Field(default=None, description="The YAML text the plan was saved from; null when saved as JSON")
    created_at: datetime


class PlanList(BaseModel):
    items: list[PlanOut]


class StartRun(SafeModel):
    agent_version: str | None = None
    app_version: str | None = None
    commit: str | None = None
    branch: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    version: int | None = Field(default=None, description="Plan version; default: the latest")


class ScheduleIn(SafeModel):
    plan: str = Field(description="Plan name (the latest version runs at each firing)")
    cron: str = Field(examples=["0 2 * * *"])
    enabled: bool = True
    agent_version: str | None = Field(default=None, min_length=1, max_length=100,
                                      description="Recorded on each scheduled run; default: the plan's agent_version")


class SchedulePatch(SafeModel):
    cron: str | None = None
    enabled: bool | None = None
    agent_version: str | None = Field(default=None, min_length=1, max_length=100)


class ScheduleOut(BaseModel):
    id: int
    plan: str
    cron: str
    enabled: bool
    agent_version: str | None
    next_fire_at: datetime | None
    last_fired_at: datetime | None


class ScheduleList(BaseModel):
    items: list[ScheduleOut]


class ProgressIn(SafeModel):
    step: str | None = None
    step_index: int | None = None
    steps_total: int | None = None
    percent: float | None = Field(default=None, ge=0, le=100)
    achieved_rate: float | None = None
    errors: int | None = None
    requests: int | None = None
    log: list[str] = Field(default_factory=list, description="New log lines since the last report")
    ready_step: int | None = Field(default=None, ge=1, le=100_000, description=(
        "A share of a run over several generators waiting to start this step (index): the answer's "
        "`step_start_at` is the step's common start instant once every share is ready for it"))


class ProgressAck(BaseModel):
    cancel_requested: bool
    start_at: datetime | None = Field(default=None, description=(
        "A run over several generators: the common instant every share starts its load at, set once every "
        "share is claimed (null until then, and for a run of one generator)"))
    step_start_at: datetime | None = Field(default=None, description=(
        "The common start instant of the step named in the report's `ready_step`, once every share is ready "
        "for it (null until then)"))


class ClaimOut(ProgressAck):
    generators: int = Field(default=1, ge=1, description="Shares the run is split into")
    share: int | None = Field(default=None, ge=0, description="The claimed share (0-based); null for one generator")
    headers: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="The plan's request headers per scenario, given only to the runner "
                                           "that claims the run (plan bodies show them as \"***\")")


class FinishIn(SafeModel):
    status: str = Field(pattern="^(failed|cancelled)$")
    reason: str

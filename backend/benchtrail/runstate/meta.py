"""What a run's `meta` column holds, as one typed model: read it with `of(run)`, change it with
`update(run, key=value, ...)` (unknown keys are refused), so no module writes an untyped key."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchtrail.validation import SafeModel


class LoadgenStep(SafeModel):
    """CPU of a measured step's load-generator processes, as the runner measured it: ingest judges
    from it whether the load generator saturated its host (`ingest.validity.load_generator`)."""

    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=0)
    load: str = Field(max_length=200)
    cpu_s: float = Field(ge=0, allow_inf_nan=False)
    wall_s: float = Field(ge=0, allow_inf_nan=False)
    max_cpu_pct: float = Field(ge=0, allow_inf_nan=False)
    cores: int = Field(ge=1, le=1_000_000)


class RunMeta(BaseModel):
    # Rows written before a key was retired (e.g. the runner's old "achieved") still read.
    model_config = ConfigDict(extra="ignore", frozen=True)

    # every run
    reference: str | None = Field(default=None, description="The reference variant")
    variants: list[str] = Field(default_factory=list, description="Variants in their declared order")
    # a plan's run
    plan: str | None = None
    plan_version: int | None = None
    pool: str | None = Field(default=None, description="Runner pool of a plan's run")
    runner_token_id: int | None = Field(default=None, description="The runner token that claimed the run")
    runner_token: str | None = None
    generators: int = Field(default=1, description="Load generators (shares) of a plan's run")
    start_at: str | None = Field(default=None, description="The shares' common start instant (ISO 8601)")
    step_starts: dict[str, str] = Field(default_factory=dict,
                                        description="The shares' common start instant of each later step, by index")
    cancel_requested: bool = Field(default=False, description="A user asked the running runner to stop")
    cancelled_by: str | None = None
    loadgen: list[LoadgenStep] = Field(default_factory=list, description="Load-generator CPU per measured step")
    # an upload's own criteria and checks (a plan's run takes them from its plan)
    criteria: list[dict[str, Any]] = Field(default_factory=list)
    file_checks: bool = False
    # alerts: regressions of a scheduled run waiting for a confirmation run
    suspected: list[dict[str, Any]] = Field(default_factory=list)


def of(run: Any) -> RunMeta:
    return RunMeta.model_validate(run.meta or {})


def dump(meta: RunMeta) -> dict[str, Any]:
    return meta.model_dump(mode="json", exclude_defaults=True)


def update(run: Any, **changes: Any) -> RunMeta:
    """Set some keys of `run.meta` (validated; an unknown key is a programming error)."""
    unknown = set(changes) - set(RunMeta.model_fields)
    if unknown:
        raise KeyError(f"Run.meta has no key(s) {sorted(unknown)}")
    current = of(run)
    merged = RunMeta.model_validate({**current.model_dump(), **changes})
    run.meta = dump(merged)
    return merged

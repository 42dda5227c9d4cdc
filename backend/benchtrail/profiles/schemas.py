from __future__ import annotations

from pydantic import BaseModel, Field

from benchtrail.trails.schemas import AbOut


class RawFileOut(BaseModel):
    id: int
    filename: str
    format: str
    download_url: str


class ProfileOut(BaseModel):
    """One repetition's CPU profile of a variant at a load level."""

    id: int
    variant: str
    scenario: str = Field(description="'*': the step loaded every scenario at once")
    load: str = Field(description="The load level's key")
    repetition: int
    step: int = Field(description="The step's place in the run's execution order")
    runtime: str = Field(description="jvm | go | python")
    source: str = Field(description="jfr | pprof | py-spy")
    period_ms: float | None = Field(description="The sampling period")
    samples: int
    cpu_ms: float = Field(description="CPU milliseconds the samples account for")
    requests: int | None = Field(description="The step's requests (of this variant at this load level)")
    cpu_ms_per_1k: float | None = Field(description="cpu_ms per 1,000 requests")
    truncated: int = Field(description="Samples whose stack JFR cut at its depth (under '[truncated stack]')")
    outside_window: int = Field(description="Samples left out: before the load's first request or after its last "
                                            "response")
    raw_files: list[RawFileOut] = Field(description="The raw profile(s) as uploaded")


class ProfilerCostOut(BaseModel):
    """The profiler's own cost in a run that left some repetitions unprofiled (plan `profile.repetitions: odd`):
    one cell's throughput, profiled repetitions against unprofiled ones of the same variant."""

    variant: str
    scenario: str
    load: str
    throughput: AbOut = Field(description="req/s: profiled (variant side) minus unprofiled (reference side) "
                                          "repetitions; rel_diff is the profiler's cost in throughput")


class ProfileList(BaseModel):
    items: list[ProfileOut]
    profiler_cost: list[ProfilerCostOut] = Field(default=[], description=(
        "Measured only when the plan profiled some repetitions and not others (profile.repetitions: odd)"))


class FlameNodeOut(BaseModel):
    id: int
    parent: int | None = Field(description="None for the root ('all')")
    name: str
    package: str = Field(description="The package prefix the frame is grouped under")
    agent: bool = Field(description="Agent code (a known agent's package, or a name of the plan's agent_packages)")
    total: float = Field(description="CPU-ms per 1,000 requests in this frame and its callees (mean over repetitions)")
    self: float = Field(description="CPU-ms per 1,000 requests in this frame itself")
    reference_total: float | None = Field(default=None, description="Differential: the reference's total")
    delta_total: float | None = Field(default=None, description="Differential: total minus the reference's")
    delta_self: float | None = Field(default=None, description="Differential: self minus the reference's")


class FlameOut(BaseModel):
    """A flame graph: nodes in breadth-first order (a parent before its children), widths in CPU-ms per 1,000
    requests. Nodes under 0.2% of the root are left out; their CPU is `hidden`."""

    run: str
    variant: str
    load: str
    scenario: str
    repetitions: int
    total: float
    hidden: float
    nodes: list[FlameNodeOut]


class CpuRowOut(BaseModel):
    name: str
    group: str = Field(description="The package prefix")
    agent: bool
    self: AbOut = Field(description="Self CPU-ms per 1,000 requests: variant minus reference, over repetitions")
    total: AbOut = Field(description="Total CPU-ms per 1,000 requests: variant minus reference, over repetitions")
    attributed: AbOut | None = Field(default=None, description=(
        "Packages: the CPU-ms per 1,000 requests attributed to the package, variant minus reference: each stack "
        "counted once, to the innermost agent code on it (the agent answers for what it calls), else to the "
        "running frame's package (native and kernel code to its nearest caller with a package); the packages' "
        "attributed CPU adds up to the whole profile"))


class ConsistencyOut(BaseModel):
    """The profiles' added CPU per request against the sampled process CPU of the same cells."""

    profile: AbOut = Field(description="The profiles' CPU-ms per 1,000 requests, variant minus reference")
    sampled: AbOut | None = Field(description="The sampled CPU (cpu_s_per_1k x 1000: CPU-ms per 1,000 requests), "
                                              "variant minus reference; None when the plan sampled no resources")
    gap_pct: float | None = Field(description="(profile delta - sampled delta) / |sampled delta| x 100")
    coverage_pct: float | None = Field(description="The variant's profile CPU over its sampled CPU, x 100: how much of "
                                                   "the process's CPU the profiler saw (JFR samples Java code only)")
    agree: bool | None = Field(description="False: the two differences' intervals do not overlap (they disagree "
                                            "by more than their noise allows); None without sampled CPU")


class ProfileDiffOut(BaseModel):
    """Variant minus reference (of this run, or of run `base`), per 1,000 requests."""

    run: str
    base: str = Field(description="The run of the reference profiles")
    variant: str
    reference: str
    load: str
    scenario: str
    flame: FlameOut = Field(description="The differential flame graph: the variant's shape, each node with the "
                                        "reference's total and the difference")
    whole: AbOut = Field(description="The whole profile: added CPU-ms per 1,000 requests")
    packages: list[CpuRowOut] = Field(description="Package prefixes, most added attributed CPU first")
    frames: list[CpuRowOut] = Field(description="The frames adding the most self or total CPU, most added self "
                                                "CPU first")
    consistency: ConsistencyOut | None = Field(description="Within one run: against the sampled process CPU")

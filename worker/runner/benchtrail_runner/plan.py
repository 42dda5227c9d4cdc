"""The plan as a runner executes it: the models of a plan body, its steps in execution order and the
load level (`LoadSpec`) that keys every cell.

The API validates a plan document in full (JSON Schema, rules, storable text: `benchtrail.plans.model`,
which builds these same models) before it stores or queues it; a runner receives that validated body
and only rebuilds the models (`parse_plan`). This module is shared by the two and imports nothing of
the server, so a load host installs it without the server's dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Tool = Literal["jmeter", "hey", "constant-rate"]
Order = Literal["simultaneous", "interleaved"]
ScenarioSteps = Literal["together", "separate"]


LoadKind = Literal["threads", "concurrency", "rate", "requests", "duration", "none"]


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """A typed load level. `kind`/`value` is the primary axis of breakdowns (thread group 10/20/50,
    concurrency 50/100/120, 1000 QPS); `requests` and `duration_s` qualify it (hey -n, -z)."""

    kind: LoadKind = "none"
    value: float | None = None
    requests: int | None = None
    duration_s: float | None = None

    @property
    def key(self) -> str:
        """Stable identity of the load level, used in trail identity and URLs."""
        parts = [self.kind]
        if self.value is not None:
            parts.append(_num(self.value))
        if self.requests is not None:
            parts.append(f"n{self.requests}")
        if self.duration_s is not None:
            parts.append(f"d{_num(self.duration_s)}s")
        return ":".join(parts)

    @property
    def label(self) -> str:
        names = {"threads": "threads", "concurrency": "concurrency", "rate": "req/s",
                 "requests": "requests", "duration": "s"}
        if self.kind == "none":
            return "—"
        text = f"{_num(self.value)} {names[self.kind]}" if self.value is not None else self.kind
        if self.requests is not None and self.kind != "requests":
            text += f", {self.requests} requests"
        return text


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


NONE_LOAD = LoadSpec()


class PlanError(ValueError):
    """A rejected plan. `problems` is a list of (field path, reason), e.g. ("loads[1].threads", ...)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{path or '<plan>'}: {reason}" for path, reason in problems))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Resources(_Model):
    source: Literal["none", "process", "prometheus"]
    pid: int | None = None
    port: int | None = None
    url: str | None = None


class Process(_Model):
    """One of a variant's sampled processes (a consumer, a provider): exactly one of a local pid, a
    command-line match, a listening port or a Prometheus URL."""

    name: str
    pid: int | None = None
    command: str | None = None
    port: int | None = None
    url: str | None = None


Runtime = Literal["jvm", "go", "python"]


class Profile(_Model):
    """A CPU profile of a variant's target in its measured steps (see `benchtrail_runner.profiling`): a JVM
    (a local pid, command-line match or listening port; default: the target's port), a Go pprof endpoint
    (default: <target>/debug/pprof/profile) or a Python process (py-spy)."""

    runtime: Runtime
    # jvm: JDK Flight Recorder (Java code only) or async-profiler (every thread's CPU, native and kernel too)
    profiler: Literal["jfr", "async-profiler"] | None = None
    pid: int | None = None
    command: str | None = None
    port: int | None = None
    url: str | None = None
    # odd: profile repetitions 1, 3, 5... only, so that the run itself measures the profiler's cost.
    repetitions: Literal["all", "odd"] = "all"
    # Package prefixes of the agent's own code besides the known agents' (benchtrail.profiles.frames).
    agent_packages: tuple[str, ...] = ()

    def covers(self, repetition: int) -> bool:
        return self.repetitions == "all" or repetition % 2 == 1


class Variant(_Model):
    name: str
    role: Literal["reference", "variant"] = "variant"
    target: str
    resources: Resources = Resources(source="none")
    processes: tuple[Process, ...] = ()
    profile: Profile | None = None

    @property
    def is_reference(self) -> bool:
        return self.role == "reference"

    @property
    def host(self) -> str:
        return urlsplit(self.target).hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        parts = urlsplit(self.target)
        return parts.port or (443 if parts.scheme == "https" else 80)

    @property
    def scheme(self) -> str:
        return urlsplit(self.target).scheme

    @property
    def base_path(self) -> str:
        return urlsplit(self.target).path.rstrip("/")

    def url(self, scenario: Scenario) -> str:
        return self.target.rstrip("/") + (scenario.path or "/")


class Scenario(_Model):
    name: str
    method: str = "GET"
    path: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    body: str | None = None
    jmx: str | None = None


class Load(_Model):
    threads: int | None = None
    concurrency: int | None = None
    rate: float | None = None
    requests: int | None = None
    loops: int | None = None
    duration_s: float | None = None
    max_vus: int | None = None
    preallocated_vus: int | None = None

    @property
    def spec(self) -> LoadSpec:
        """The load level as the ingest model keys it: threads/concurrency win over a rate cap."""
        if self.threads is not None:
            kind, value = "threads", float(self.threads)
        elif self.concurrency is not None:
            kind, value = "concurrency", float(self.concurrency)
        else:
            kind, value = "rate", float(self.rate or 0)
        return LoadSpec(kind=kind, value=value, requests=self.requests, duration_s=self.duration_s)

    def expected_duration_s(self) -> float | None:
        if self.duration_s is not None:
            return self.duration_s
        if self.requests is not None and self.rate:
            return self.requests / self.rate
        return None


class Sampling(_Model):
    interval_s: float = 1.0


class Criterion(_Model):
    metric: str
    op: Literal["<", "<=", ">", ">="]
    value: float
    variant: str | None = None
    scenario: str | None = None
    overhead: bool = False

    def holds(self, observed: float) -> bool:
        return {"<": observed < self.value, "<=": observed <= self.value,
                ">": observed > self.value, ">=": observed >= self.value}[self.op]

    @property
    def text(self) -> str:
        return f"{'overhead of ' if self.overhead else ''}{self.metric} {self.op} {self.value:g}"


class Plan(_Model):
    version: Literal[1]
    name: str
    description: str | None = None
    agent_version: str | None = None
    tool: Tool
    pool: str = "default"
    # Load generators: the run is split into this many shares, one per runner (see `share_plan`).
    generators: int = 1
    variants: tuple[Variant, ...]
    scenarios: tuple[Scenario, ...]
    loads: tuple[Load, ...]
    warmup_s: float = 0.0
    # Defaults: 3 repetitions per variant, interleaved A/B/A/B, so every overhead has per-repetition
    # values that show run-to-run noise (the A/B analysis treats the repetition as the unit).
    repetitions: int = 3
    order: Order = "interleaved"
    # together: every scenario of a step is loaded at once; separate: one measured step per scenario, so the
    # scenarios never share the target's CPU or queue and each latency holds its own scenario's work.
    scenario_steps: ScenarioSteps = "together"
    sampling: Sampling = Sampling()
    step_timeout_s: float | None = None
    criteria: tuple[Criterion, ...] = ()

    @property
    def reference(self) -> Variant | None:
        return next((v for v in self.variants if v.is_reference), None)

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)


def parse_plan(data: Any) -> Plan:
    """The models of a plan body the API has validated (a runner's view: no JSON Schema, no rules);
    raises PlanError naming the field of what does not fit, e.g. a field this runner does not know."""
    if not isinstance(data, dict):
        raise PlanError([("", "a plan is a mapping (object) at the top level")])
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise PlanError([(".".join(str(p) for p in e["loc"]), e["msg"]) for e in exc.errors()]) from None


def split_count(total: int, share: int, generators: int) -> int:
    """Share `share` (0-based) of `total` threads, connections or requests over `generators`: an even
    split, the first `total % generators` shares taking one more (10 over 3: 4, 3, 3)."""
    if not 0 <= share < generators:
        raise ValueError(f"share {share} is not one of {generators} generators")
    return total // generators + (1 if share < total % generators else 0)


def share_load(load: Load, share: int, generators: int) -> Load:
    """What one share runs of a load level: counts split by `split_count`, the rate divided exactly
    (1000 req/s over 3: 333.33… each); the duration and JMeter's loops (per thread) stay."""
    if generators == 1:
        return load
    counts = {k: split_count(v, share, generators) for k in ("threads", "concurrency", "requests", "max_vus", "preallocated_vus")
              if (v := getattr(load, k)) is not None}
    rate = {"rate": load.rate / generators} if load.rate is not None else {}
    return load.model_copy(update={**counts, **rate})


def share_plan(plan: Plan, share: int) -> Plan:
    """The plan one share executes: every load split (`share_load`). Only the first share samples the
    targets' resources and named processes and profiles them (a target is measured once, not once per
    generator)."""
    if plan.generators == 1:
        return plan
    update: dict[str, Any] = {"loads": tuple(share_load(ld, share, plan.generators) for ld in plan.loads)}
    if share > 0:
        update["variants"] = tuple(v.model_copy(update={"resources": Resources(source="none"), "processes": (),
                                                        "profile": None})
                                   for v in plan.variants)
    return plan.model_copy(update=update)


Phase = Literal["warmup", "measure"]


class Step(_Model):
    """One invocation of the load tool(s): one load level against one or more variants at once."""

    index: int
    phase: Phase
    repetition: int          # 1-based; 0 for warm-up
    load_index: int
    load: Load
    variants: tuple[str, ...]
    scenarios: tuple[str, ...] = ()   # the scenarios this step loads; empty: all of the plan's

    @property
    def name(self) -> str:
        rep = "warmup" if self.phase == "warmup" else f"rep {self.repetition}"
        only = f" / {', '.join(self.scenarios)}" if self.scenarios else ""
        return f"{self.load.spec.label} / {rep} / {', '.join(self.variants)}{only}"


def step_scenarios(plan: Plan, step: Step) -> tuple[Scenario, ...]:
    """The scenarios a step loads (plan order)."""
    if not step.scenarios:
        return plan.scenarios
    return tuple(s for s in plan.scenarios if s.name in step.scenarios)


def _warmup_load(load: Load, seconds: float) -> Load:
    # The warm-up keeps the load level but is bounded by time: a request/loop count would make its
    # length depend on the target's speed.
    return load.model_copy(update={"duration_s": seconds, "requests": None, "loops": None})


def steps(plan: Plan) -> list[Step]:
    """The plan's steps in execution order. simultaneous: every step loads all variants together.
    interleaved: A/B/A/B — per load level and repetition, one step per variant in plan order.
    scenario_steps separate: within each repetition one scenario after the other, each with the steps the
    order gives (interleaved: s1 A, s1 B, s2 A, s2 B); a warm-up still loads every scenario at once."""
    out: list[Step] = []
    names = tuple(v.name for v in plan.variants)
    groups = [names] if plan.order == "simultaneous" else [(n,) for n in names]

    per_step = [()] if plan.scenario_steps == "together" else [(s.name,) for s in plan.scenarios]

    def add(phase: Phase, rep: int, li: int, load: Load, group: tuple[str, ...],
            scenarios: tuple[str, ...] = ()) -> None:
        out.append(Step(index=len(out), phase=phase, repetition=rep, load_index=li, load=load,
                        variants=group, scenarios=scenarios))

    for li, load in enumerate(plan.loads):
        if plan.warmup_s > 0:
            for group in groups:
                add("warmup", 0, li, _warmup_load(load, plan.warmup_s), group)
        for rep in range(1, plan.repetitions + 1):
            for scenarios in per_step:
                for group in groups:
                    add("measure", rep, li, load, group, scenarios)
    return out

"""Plans: the documented YAML/JSON format (docs/plans/plan-v1.schema.json) as pydantic models.

`load_plan(text)` validates against the JSON Schema first (so the schema is the contract users read),
then builds the models and applies the rules a schema cannot say well (tool vs load kind, one
reference variant, unique names). Every error names the field path and the reason.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import jsonschema
import yaml
from benchtrail.ingest.model import LoadSpec
from pydantic import ConfigDict, Field, ValidationError
from benchtrail.validation import SafeModel

Tool = Literal["jmeter", "hey", "constant-rate"]
Order = Literal["simultaneous", "interleaved"]

_SCHEMA_ENV = "BENCHTRAIL_PLAN_SCHEMA"
_DEFAULT_SCHEMA = Path(__file__).resolve().parents[3] / "docs" / "plans" / "plan-v1.schema.json"


class PlanError(ValueError):
    """A rejected plan. `problems` is a list of (field path, reason), e.g. ("loads[1].threads", ...)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{path or '<plan>'}: {reason}" for path, reason in problems))


class _Model(SafeModel):
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


class Variant(_Model):
    name: str
    role: Literal["reference", "variant"] = "variant"
    target: str
    resources: Resources = Resources(source="none")
    processes: tuple[Process, ...] = ()

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
    variants: tuple[Variant, ...]
    scenarios: tuple[Scenario, ...]
    loads: tuple[Load, ...]
    warmup_s: float = 0.0
    # Defaults: 3 repetitions per variant, interleaved A/B/A/B, so every overhead has per-repetition
    # values that show run-to-run noise (the A/B analysis treats the repetition as the unit).
    repetitions: int = 3
    order: Order = "interleaved"
    sampling: Sampling = Sampling()
    step_timeout_s: float | None = None
    criteria: tuple[Criterion, ...] = ()

    @property
    def reference(self) -> Variant | None:
        return next((v for v in self.variants if v.is_reference), None)

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    path = Path(os.environ.get(_SCHEMA_ENV, _DEFAULT_SCHEMA))
    return json.loads(path.read_text())


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _schema_problems(data: Any) -> list[tuple[str, str]]:
    validator = jsonschema.Draft202012Validator(schema())
    problems: list[tuple[str, str]] = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        # oneOf/anyOf failures hide the useful reason in their sub-errors; report the closest one.
        best = jsonschema.exceptions.best_match([error]) if error.context else error
        path = _path(best.absolute_path)
        reason = best.message
        if best.validator == "additionalProperties":
            reason = f"unknown field(s): {reason.split('(')[-1].rstrip(')')}"
        elif best.validator == "oneOf" and "processes" in best.absolute_path:
            reason = "a process needs exactly one of pid, command, port or url"
        problems.append((path, reason))
    return problems


_LOAD_KIND = {"jmeter": "threads", "hey": "concurrency", "constant-rate": "rate"}


def _rule_problems(plan: Plan) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for field, items in (("variants", plan.variants), ("scenarios", plan.scenarios)):
        seen: set[str] = set()
        for i, item in enumerate(items):
            if item.name in seen:
                problems.append((f"{field}[{i}].name", f"duplicate name '{item.name}'"))
            seen.add(item.name)
    references = [i for i, v in enumerate(plan.variants) if v.is_reference]
    if len(references) > 1:
        problems.append((f"variants[{references[1]}].role", "only one variant can be the reference"))
    for i, v in enumerate(plan.variants):
        if v.resources.source == "process" and v.resources.pid is None and v.host not in (
                "127.0.0.1", "localhost", "::1"):
            problems.append((f"variants[{i}].resources",
                             "source 'process' needs a pid or a target on this host (127.0.0.1)"))
        seen_processes: set[str] = set()
        for j, p in enumerate(v.processes):
            if p.name in seen_processes:
                problems.append((f"variants[{i}].processes[{j}].name", f"duplicate process name '{p.name}'"))
            seen_processes.add(p.name)
    kind = _LOAD_KIND[plan.tool]
    for i, load in enumerate(plan.loads):
        where = f"loads[{i}]"
        if getattr(load, kind) is None:
            problems.append((f"{where}.{kind}", f"required by tool '{plan.tool}'"))
        for other in set(_LOAD_KIND.values()) - {kind, "rate"}:
            if getattr(load, other) is not None:
                problems.append((f"{where}.{other}", f"not used by tool '{plan.tool}' (use {kind})"))
        if plan.tool == "constant-rate" and load.duration_s is None:
            problems.append((f"{where}.duration_s", "required by tool 'constant-rate'"))
        if plan.tool == "hey":
            if (load.requests is None) == (load.duration_s is None):
                problems.append((where, "hey needs exactly one of requests (-n) or duration_s (-z)"))
            if load.rate is not None and load.concurrency and load.rate < load.concurrency:
                problems.append((f"{where}.rate", "hey paces per worker: rate must be >= concurrency"))
        if plan.tool == "jmeter" and (load.loops is None) == (load.duration_s is None):
            problems.append((where, "jmeter needs exactly one of loops or duration_s"))
        if plan.tool != "jmeter" and load.loops is not None:
            problems.append((f"{where}.loops", "only used by tool 'jmeter'"))
        if plan.tool != "hey" and load.requests is not None:
            problems.append((f"{where}.requests", "only used by tool 'hey'"))
        if plan.tool != "constant-rate" and load.max_vus is not None:
            problems.append((f"{where}.max_vus", "only used by tool 'constant-rate'"))
    for i, s in enumerate(plan.scenarios):
        if s.jmx is not None and plan.tool != "jmeter":
            problems.append((f"scenarios[{i}].jmx", "a JMX file needs tool 'jmeter'"))
        if s.body is not None and plan.tool == "hey" and s.method in ("GET", "HEAD"):
            problems.append((f"scenarios[{i}].body", f"a body needs a method other than {s.method}"))
    names = {v.name for v in plan.variants}
    scenario_names = {s.name for s in plan.scenarios}
    for i, c in enumerate(plan.criteria):
        if c.variant is not None and c.variant not in names:
            problems.append((f"criteria[{i}].variant", f"no variant named '{c.variant}'"))
        if c.scenario is not None and c.scenario not in scenario_names:
            problems.append((f"criteria[{i}].scenario", f"no scenario named '{c.scenario}'"))
        if c.overhead and plan.reference is None:
            problems.append((f"criteria[{i}].overhead", "an overhead criterion needs a reference variant"))
    return problems


def parse_plan_data(data: Any) -> Plan:
    problems = _schema_problems(data)
    if problems:
        raise PlanError(problems)
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:  # what the schema cannot say, e.g. a NUL byte in a name
        raise PlanError([(".".join(str(p) for p in e["loc"]), e["msg"]) for e in exc.errors()]) from None
    problems = _rule_problems(plan)
    if problems:
        raise PlanError(problems)
    return plan


def load_plan(text: str) -> Plan:
    """Parse a YAML (or JSON, which is YAML) plan and validate it; raises PlanError."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise PlanError([(where, f"not valid YAML/JSON: {getattr(exc, 'problem', exc)}")]) from None
    if not isinstance(data, dict):
        raise PlanError([("", "a plan is a mapping (YAML object) at the top level")])
    return parse_plan_data(data)


Phase = Literal["warmup", "measure"]


class Step(_Model):
    """One invocation of the load tool(s): one load level against one or more variants at once."""

    index: int
    phase: Phase
    repetition: int          # 1-based; 0 for warm-up
    load_index: int
    load: Load
    variants: tuple[str, ...]

    @property
    def name(self) -> str:
        rep = "warmup" if self.phase == "warmup" else f"rep {self.repetition}"
        return f"{self.load.spec.label} / {rep} / {', '.join(self.variants)}"


def _warmup_load(load: Load, seconds: float) -> Load:
    # The warm-up keeps the load level but is bounded by time: a request/loop count would make its
    # length depend on the target's speed.
    return load.model_copy(update={"duration_s": seconds, "requests": None, "loops": None})


def steps(plan: Plan) -> list[Step]:
    """The plan's steps in execution order. simultaneous: every step loads all variants together.
    interleaved: A/B/A/B — per load level and repetition, one step per variant in plan order."""
    out: list[Step] = []
    names = tuple(v.name for v in plan.variants)
    groups = [names] if plan.order == "simultaneous" else [(n,) for n in names]

    def add(phase: Phase, rep: int, li: int, load: Load, group: tuple[str, ...]) -> None:
        out.append(Step(index=len(out), phase=phase, repetition=rep, load_index=li, load=load,
                        variants=group))

    for li, load in enumerate(plan.loads):
        if plan.warmup_s > 0:
            for group in groups:
                add("warmup", 0, li, _warmup_load(load, plan.warmup_s), group)
        for rep in range(1, plan.repetitions + 1):
            for group in groups:
                add("measure", rep, li, load, group)
    return out

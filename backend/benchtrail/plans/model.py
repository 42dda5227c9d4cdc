"""Plans: the documented YAML/JSON format (docs/plans/plan-v1.schema.json) as pydantic models (defined in
the runner package, `benchtrail_runner.plan`, which a load host installs without the server).

`load_plan(text)` validates against the JSON Schema first (so the schema is the contract users read),
then builds the models and applies the rules a schema cannot say well (tool vs load kind, one
reference variant, unique names). Every error names the field path and the reason.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import ValidationError

from benchtrail.validation import describe, find_unsafe
from benchtrail_runner.plan import (  # noqa: F401  (re-exported: the API and the runner share one model)
    Criterion, Load, Order, Phase, Plan, PlanError, Process, Profile, Resources, Sampling, Scenario, Step, Tool, Variant, parse_plan,
    share_load, share_plan, split_count, steps)

_SCHEMA_ENV = "BENCHTRAIL_PLAN_SCHEMA"
_DEFAULT_SCHEMA = Path(__file__).resolve().parents[3] / "docs" / "plans" / "plan-v1.schema.json"


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
        profile = v.profile
        if profile is not None:
            where = f"variants[{i}].profile"
            local = [k for k in ("pid", "command", "port") if getattr(profile, k) is not None]
            if profile.profiler is not None and profile.runtime != "jvm":
                problems.append((f"{where}.profiler", f"{profile.profiler} profiles a JVM (runtime jvm)"))
            if profile.runtime == "go" and local:
                problems.append((f"{where}.{local[0]}", "a Go profile is read from its pprof URL (url), not a local process"))
            if profile.runtime != "go" and profile.url is not None:
                problems.append((f"{where}.url", f"a {profile.runtime} profile is taken from a local process "
                                                 f"(pid, command or port), not a URL"))
            if len(local) > 1:
                problems.append((where, f"give one of pid, command or port (not {' and '.join(local)})"))
            if profile.runtime != "go" and not local and v.host not in ("127.0.0.1", "localhost", "::1"):
                problems.append((where, f"a {profile.runtime} profile needs a pid, command or port on the runner's "
                                        f"host, or a target on this host (127.0.0.1)"))
            if plan.generators > 1:
                problems.append((where, "a profile is normalised by the step's requests, which a run over several "
                                        "generators splits: profile with generators 1"))
            if profile.repetitions == "odd" and plan.repetitions < 2:
                problems.append((f"{where}.repetitions", "'odd' leaves every other repetition unprofiled: it needs "
                                                         "2 or more repetitions"))
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
        for name in ("max_vus", "preallocated_vus"):
            if plan.tool != "constant-rate" and getattr(load, name) is not None:
                problems.append((f"{where}.{name}", "only used by tool 'constant-rate'"))
        if load.preallocated_vus is not None and load.max_vus is not None and load.preallocated_vus > load.max_vus:
            problems.append((f"{where}.preallocated_vus", f"{load.preallocated_vus} is more than max_vus "
                                                          f"({load.max_vus})"))
    if plan.generators > 1:
        for i, load in enumerate(plan.loads):
            for name in ("threads", "concurrency", "requests", "max_vus", "preallocated_vus"):
                value = getattr(load, name)
                if value is not None and value < plan.generators:
                    problems.append((f"loads[{i}].{name}", f"{value} cannot be split over {plan.generators} "
                                                           f"generators (each share needs at least 1)"))
            if plan.tool == "hey" and load.rate is not None and load.concurrency and \
                    load.rate / plan.generators < split_count(load.concurrency, 0, plan.generators):
                problems.append((f"loads[{i}].rate", f"hey paces per worker: each of the {plan.generators} "
                                                     f"shares needs rate >= its concurrency"))
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
    unsafe = find_unsafe(data)
    if unsafe is not None:  # what the schema cannot say, e.g. a NUL byte in a name
        where, problem = unsafe
        raise PlanError([(describe(where), problem)])
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
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

"""Executing a whole plan: steps in order, resource sampling around measured steps, validity checks
and pass/fail criteria, progress and cancellation. What a `runs.execute` task calls; it then
uploads `PlanResult.files()` and stores the summaries.

Criteria are judged here on each raw output as a whole (numpy percentiles over every sample of the
file) so the runner can report pass/fail at once; ingest recomputes exact per-scenario cells.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .outputs import OutputSummary
from benchtrail.plans.model import Criterion, Plan, Step, steps
from .process import ToolError
from .sampling import ResourceSummary, process_sampling, sampling
from .tools import Progress, StepOutput, StepRun, run_step
from .validity import Check, check_step

_PCT = {"latency_p50": 50.0, "latency_p75": 75.0, "latency_p90": 90.0, "latency_p95": 95.0,
        "latency_p99": 99.0, "latency_p999": 99.9}


@dataclass
class CriterionResult:
    criterion: str
    variant: str
    scenario: str | None
    step: int
    observed: float | None
    ok: bool | None                # None: not evaluable here (e.g. no resource source)
    detail: str


@dataclass
class StepResult:
    step: Step
    run: StepRun | None            # None for a step that failed before producing outputs
    resources: dict[str, ResourceSummary] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    criteria: list[CriterionResult] = field(default_factory=list)
    # a variant's named processes (plan `processes`), keyed (variant, process)
    processes: dict[tuple[str, str], ResourceSummary] = field(default_factory=dict)


@dataclass
class PlanResult:
    plan: Plan
    steps: list[StepResult]

    @property
    def passed(self) -> bool:
        return all(c.ok is not False for s in self.steps for c in s.criteria)

    @property
    def valid(self) -> bool:
        return all(c.ok for s in self.steps for c in s.checks)

    def files(self) -> list[tuple[StepOutput, Step]]:
        """Raw outputs of measured steps (warm-up outputs are not kept), for upload."""
        return [(o, s.step) for s in self.steps if s.run and s.step.phase == "measure" for o in s.run.outputs]

    def manifest(self) -> dict[str, object]:
        """A JSON-able record of the run: per step the files, loads, resources, checks, criteria."""
        out = []
        for s in self.steps:
            entry: dict[str, object] = {
                "index": s.step.index, "phase": s.step.phase, "repetition": s.step.repetition,
                "load": s.step.load.spec.key, "variants": list(s.step.variants),
                "checks": [c.as_tuple() for c in s.checks], "criteria": [asdict(c) for c in s.criteria],
                "resources": {v: {k: val for k, val in asdict(r).items() if k != "points"} | {
                    "points": [asdict(p) for p in r.points]} for v, r in s.resources.items()},
                "processes": {f"{v}/{p}": {k: val for k, val in asdict(r).items() if k != "points"}
                              for (v, p), r in s.processes.items()},
            }
            if s.run is not None:
                entry |= {"started_ms": s.run.started_ms, "ended_ms": s.run.ended_ms, "outputs": [
                    {"variant": o.variant, "scenario": o.scenario, "format": o.format, "path": str(o.path),
                     "count": o.summary.count, "errors": o.summary.errors} for o in s.run.outputs]}
            out.append(entry)
        return {"plan": self.plan.name, "tool": self.plan.tool, "passed": self.passed, "valid": self.valid,
                "steps": out}


def _observed(metric: str, s: OutputSummary, res: ResourceSummary | None) -> float | None:
    lat = s.latencies_ms
    if metric in _PCT:
        return float(np.percentile(lat, _PCT[metric])) if lat.size else None
    if metric == "latency_mean":
        return float(lat.mean()) if lat.size else None
    if metric == "latency_max":
        return float(lat.max()) if lat.size else None
    if metric == "error_rate":
        return s.error_rate_pct
    if metric == "throughput":
        return s.achieved_rate
    if metric == "achieved_rate":
        return s.arrival_rate if s.arrival_rate is not None else s.achieved_rate
    if res is None:
        return None
    return res.stats().get(metric)


def _judge(plan: Plan, step: Step, outputs: list[StepOutput], resources: dict[str, ResourceSummary],
           reference: dict[tuple[str | None, str], float | None], c: Criterion) -> list[CriterionResult]:
    results = []
    for o in outputs:
        if c.variant not in (None, o.variant) or c.scenario not in (None, o.scenario):
            continue
        value = _observed(c.metric, o.summary, resources.get(o.variant))
        ref_value = reference.get((o.scenario, c.metric))
        if c.overhead:
            if plan.reference is None or o.variant == plan.reference.name:
                continue
            value = None if value is None or ref_value is None else value - ref_value
        if value is None:
            results.append(CriterionResult(c.text, o.variant, o.scenario, step.index, None, None,
                                           "not measured in this step"))
            continue
        ok = c.holds(value)
        results.append(CriterionResult(c.text, o.variant, o.scenario, step.index, value, ok,
                                       f"{c.metric}{' overhead' if c.overhead else ''} = {value:.3f} "
                                       f"({'pass' if ok else 'FAIL'}: {c.op} {c.value:g})"))
    return results


def _window(run: StepRun, variant: str) -> tuple[float, float] | None:
    windows = [o.summary.window for o in run.outputs if o.variant == variant]
    if not windows or any(w is None for w in windows):
        return None
    return (min(w[0] for w in windows if w), max(w[1] for w in windows if w))


def execute_plan(
    plan: Plan,
    workdir: Path,
    *,
    plan_dir: Path | None = None,
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[Progress], None] | None = None,
    on_step: Callable[[StepResult], None] | None = None,
) -> PlanResult:
    """Run every step. A ToolError stops the plan and propagates (after recording what finished);
    cancellation is a ToolError with `cancelled` set."""
    results: list[StepResult] = []
    # reference values per (load index, repetition) for overhead criteria in interleaved order
    ref_values: dict[tuple[int, int], dict[tuple[str | None, str], float | None]] = {}
    for step in steps(plan):
        variants = [plan.variant(n) for n in step.variants]
        step_dir = workdir / f"step{step.index:03d}"
        if step.phase == "warmup":
            run = run_step(plan, step, step_dir, plan_dir=plan_dir, cancel=cancel, progress=progress)
            result = StepResult(step, run)
        else:
            with sampling(variants, plan.sampling.interval_s) as samplers, \
                    process_sampling(variants, plan.sampling.interval_s) as process_samplers:
                run = run_step(plan, step, step_dir, plan_dir=plan_dir, cancel=cancel, progress=progress)
                requests = {v: sum(o.summary.count for o in run.outputs if o.variant == v) for v in step.variants}
                resources = {v: s.stop(requests[v], _window(run, v)) for v, s in samplers.items()}
                processes = {k: s.stop(requests[k[0]], _window(run, k[0])) for k, s in process_samplers.items()}
            result = StepResult(step, run, resources, check_step(plan, run), processes=processes)
            key = (step.load_index, step.repetition)
            if plan.reference is not None and plan.reference.name in step.variants:
                ref_values[key] = {
                    (o.scenario, c.metric): _observed(c.metric, o.summary, resources.get(o.variant))
                    for o in run.outputs if o.variant == plan.reference.name for c in plan.criteria}
            for c in plan.criteria:
                result.criteria += _judge(plan, step, run.outputs, resources, ref_values.get(key, {}), c)
        results.append(result)
        if on_step is not None:
            on_step(result)
    return PlanResult(plan, results)


def write_manifest(result: PlanResult, path: Path) -> None:
    path.write_text(json.dumps(result.manifest(), indent=2, default=str))


__all__ = ["CriterionResult", "PlanResult", "StepResult", "ToolError", "execute_plan", "write_manifest"]

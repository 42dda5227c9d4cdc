"""Executing a whole plan: steps in order, resource sampling around measured steps, progress and
cancellation. What a `runs.execute` task calls; it then uploads `PlanResult.files()`.

The runner only launches, samples and uploads: pass/fail criteria and validity are judged by ingest on
the uploaded files (`benchtrail.ingest.criteria`, `benchtrail.ingest.validity`), exactly as for an upload.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .plan import Plan, Step, steps
from .process import ToolError
from .profiling import ProfileFile, StepProfiles
from .sampling import ResourceSummary, process_sampling, sampling
from .tools import Progress, StepOutput, StepRun, run_step


@dataclass
class StepResult:
    step: Step
    run: StepRun | None            # None for a step that failed before producing outputs
    resources: dict[str, ResourceSummary] = field(default_factory=dict)
    # a variant's named processes (plan `processes`), keyed (variant, process)
    processes: dict[tuple[str, str], ResourceSummary] = field(default_factory=dict)
    profiles: list[ProfileFile] = field(default_factory=list)   # CPU profiles of its variants (plan `profile`)


@dataclass
class PlanResult:
    plan: Plan
    steps: list[StepResult]

    def files(self) -> list[tuple[StepOutput, Step]]:
        """Raw outputs of measured steps (warm-up outputs are not kept), for upload."""
        return [(o, s.step) for s in self.steps if s.run and s.step.phase == "measure" for o in s.run.outputs]

    def manifest(self) -> dict[str, object]:
        """A JSON-able record of the run: per step the files, loads, resources and load-generator CPU."""
        out = []
        for s in self.steps:
            entry: dict[str, object] = {
                "index": s.step.index, "phase": s.step.phase, "repetition": s.step.repetition,
                "load": s.step.load.spec.key, "variants": list(s.step.variants),
                "resources": {v: {k: val for k, val in asdict(r).items() if k != "points"} | {
                    "points": [asdict(p) for p in r.points]} for v, r in s.resources.items()},
                "processes": {f"{v}/{p}": {k: val for k, val in asdict(r).items() if k != "points"}
                              for (v, p), r in s.processes.items()},
            }
            if s.run is not None:
                entry |= {"started_ms": s.run.started_ms, "ended_ms": s.run.ended_ms,
                          "loadgen_cpu_s": s.run.loadgen_cpu_s, "outputs": [
                              {"variant": o.variant, "scenario": o.scenario, "format": o.format, "path": str(o.path),
                               "count": o.summary.count, "errors": o.summary.errors} for o in s.run.outputs]}
            out.append(entry)
        return {"plan": self.plan.name, "tool": self.plan.tool, "steps": out}


def _window(run: StepRun, variant: str) -> tuple[float, float] | None:
    windows = [o.summary.window for o in run.outputs if o.variant == variant]
    if not windows or any(w is None for w in windows):
        return None
    return (min(w[0] for w in windows if w), max(w[1] for w in windows if w))


def _profile_seconds(plan: Plan, step: Step) -> float | None:
    """How long a Go profile of the step is asked for: the step's length when the load starts with its tool
    (hey, k6) and that length is known; None (pieces until the step ends) for JMeter, whose JVM takes seconds
    to start, and for a step of a request count."""
    if plan.tool == "jmeter":
        return None
    return step.load.duration_s


def window_ms(run: StepRun, variant: str) -> tuple[int, int] | None:
    """The variant's load window in the step (first request to last response; the step's start and end when
    its outputs do not tell), epoch ms."""
    w = _window(run, variant)
    if w is None:   # hey's CSV times count from its own start: the step's own start and end
        return (run.started_ms, run.ended_ms)
    return (int(w[0] * 1000), int(math.ceil(w[1] * 1000)))


def execute_plan(
    plan: Plan,
    workdir: Path,
    *,
    plan_dir: Path | None = None,
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[Progress], None] | None = None,
    on_step: Callable[[StepResult], None] | None = None,
    before_step: Callable[[Step], None] | None = None,
) -> PlanResult:
    """Run every step. A ToolError stops the plan and propagates (after recording what finished);
    cancellation is a ToolError with `cancelled` set. `before_step(step)` is called before each step
    (a share of a run over several generators waits there for the other shares)."""
    results: list[StepResult] = []
    for step in steps(plan):
        if before_step is not None:
            before_step(step)
        variants = [plan.variant(n) for n in step.variants]
        step_dir = workdir / f"step{step.index:03d}"
        if step.phase == "warmup":
            run = run_step(plan, step, step_dir, plan_dir=plan_dir, cancel=cancel, progress=progress)
            result = StepResult(step, run)
        else:
            with sampling(variants, plan.sampling.interval_s) as samplers, \
                    process_sampling(variants, plan.sampling.interval_s) as process_samplers:
                step_dir.mkdir(parents=True, exist_ok=True)
                # Profilers start last and stop first: they cover the load tools' run and little else.
                profiles = StepProfiles(variants, step.repetition, step_dir, step.index, _profile_seconds(plan, step))
                try:
                    run = run_step(plan, step, step_dir, plan_dir=plan_dir, cancel=cancel, progress=progress)
                finally:
                    profiled = profiles.stop()
                requests = {v: sum(o.summary.count for o in run.outputs if o.variant == v) for v in step.variants}
                resources = {v: s.stop(requests[v], _window(run, v)) for v, s in samplers.items()}
                processes = {k: s.stop(requests[k[0]], _window(run, k[0])) for k, s in process_samplers.items()}
            result = StepResult(step, run, resources, processes=processes, profiles=profiled)
        results.append(result)
        if on_step is not None:
            on_step(result)
    return PlanResult(plan, results)


def write_manifest(result: PlanResult, path: Path) -> None:
    path.write_text(json.dumps(result.manifest(), indent=2, default=str))


__all__ = ["PlanResult", "StepResult", "ToolError", "execute_plan", "write_manifest"]

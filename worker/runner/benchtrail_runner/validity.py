"""Was a step a valid measurement? Achieved vs requested rate, error rate, a saturated load
generator, dropped arrivals. Returns (check, ok, detail) rows; the run keeps them next to its cells
so an invalid step is visible, not silently averaged in."""

from __future__ import annotations

from dataclasses import dataclass

import psutil

from .plan import Plan
from .tools import StepRun


@dataclass(frozen=True)
class Check:
    check: str
    ok: bool
    detail: str

    def as_tuple(self) -> tuple[str, bool, str]:
        return (self.check, self.ok, self.detail)


RATE_TOLERANCE = 0.01          # ±1 % of a requested rate
MAX_ERROR_RATE_PCT = 1.0
SATURATION_SHARE = 0.9         # load generators using >= 90 % of the host's cores


def check_step(plan: Plan, run: StepRun, *, cpu_count: int | None = None,
               rate_tolerance: float = RATE_TOLERANCE, max_error_pct: float = MAX_ERROR_RATE_PCT) -> list[Check]:
    checks: list[Check] = []
    requested = run.step.load.rate
    for o in run.outputs:
        who = o.variant if o.scenario is None else f"{o.variant}/{o.scenario}"
        s = o.summary
        if requested is not None:
            per_file = requested * (len(plan.scenarios) if o.scenario is None else 1)
            achieved = s.arrival_rate if s.arrival_rate is not None else s.achieved_rate
            dev = (achieved - per_file) / per_file
            checks.append(Check(f"rate {who}", abs(dev) <= rate_tolerance,
                                f"achieved {achieved:.1f} req/s vs requested {per_file:g} ({dev:+.2%}, "
                                f"tolerance ±{rate_tolerance:.0%})"))
        checks.append(Check(f"errors {who}", s.error_rate_pct < max_error_pct,
                            f"{s.errors} of {s.count} failed ({s.error_rate_pct:.2f}%, limit {max_error_pct:g}%)"
                            + (f"; first: {s.first_failure}" if s.first_failure else "")))
        if s.dropped:
            checks.append(Check(f"dropped {who}", False,
                                f"{s.dropped} arrivals not sent (too few virtual users; raise max_vus)"))
    cores = cpu_count or psutil.cpu_count() or 1
    wall = max(run.wall_s, 1e-9)
    share = run.loadgen_cpu_s / wall / cores
    saturated = share >= SATURATION_SHARE
    checks.append(Check("load generator", not saturated,
                        f"load generators used {run.loadgen_cpu_s:.1f} CPU-s in {wall:.1f} s = "
                        f"{share:.0%} of {cores} cores (peak process {run.loadgen_max_cpu_pct:.0f}% of one core)"
                        + ("; saturated: results measure the load generator" if saturated else "")))
    return checks

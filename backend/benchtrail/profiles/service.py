"""Reading a run's CPU profiles: the list, a variant's flame graph, and the differential profile (variant minus
reference of the run, or of another run) with the frames and packages that add CPU and the check against the
sampled process CPU. The numbers come from `benchtrail.profiles.tree`."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlalchemy.orm import Session

from benchtrail.analysis import compare
from benchtrail.analysis.ab import AbResult
from benchtrail.auth.principal import Principal
from benchtrail.config import get_settings
from benchtrail.errors import ErrorCode, InvalidRequest, NotFound
from benchtrail.models import Profile, Run
from benchtrail.profiles import repository, tree
from benchtrail.profiles.schemas import (ConsistencyOut, CpuRowOut, FlameNodeOut, FlameOut, ProfileDiffOut,
                                         ProfileList, ProfileOut, ProfilerCostOut, RawFileOut)
from benchtrail.runstate.access import get_visible_run
from benchtrail.trails.overhead import counted_repetitions, reported_repetitions, to_dict
from benchtrail.trails.schemas import AbOut

ALL = "*"
PREVIOUS = "previous"   # `base`: the project's latest run before this one with a profile of the variant
Found = list[tuple[Profile, str, str, str]]


def _ab(result: AbResult) -> AbOut:
    return AbOut(**to_dict(result))


def _run(session: Session, principal: Principal, slug: str) -> tuple[Run, Found]:
    run, _ = get_visible_run(session, principal, slug)
    return run, repository.of_run(session, run.id)


def list_profiles(session: Session, principal: Principal, slug: str) -> ProfileList:
    run, found = _run(session, principal, slug)
    files = repository.files(session, run.id, {i for p, *_ in found for i in p.raw_files})
    base = get_settings().public_url.rstrip("/")
    items = []
    for p, variant, scenario, load in found:
        raw = [RawFileOut(id=f.id, filename=f.filename, format=f.format,
                          download_url=f"{base}/api/v1/runs/{run.slug}/files/{f.id}/raw")
               for i in p.raw_files if (f := files.get(i)) is not None]
        items.append(ProfileOut(
            id=p.id, variant=variant, scenario=scenario, load=load, repetition=p.repetition, step=p.step,
            runtime=p.runtime, source=p.source, period_ms=p.period_ms, samples=p.samples, cpu_ms=p.cpu_ms,
            requests=p.requests, cpu_ms_per_1k=p.cpu_ms * 1000.0 / p.requests if p.requests else None,
            truncated=p.truncated, outside_window=p.outside_window, raw_files=raw))
    return ProfileList(items=items, profiler_cost=_profiler_cost(session, run, found))


def _profiler_cost(session: Session, run: Run, found: Found) -> list[ProfilerCostOut]:
    """Throughput of the profiled repetitions against the unprofiled ones of each profiled variant's cells."""
    profiled = {(v, ld, (p.meta or {}).get("started_ms")) for p, v, _, ld in found}
    variants = {v for _, v, _, _ in found}
    if not found:
        return []
    starts = repository.file_starts(session, run.id)
    cells = repository.sample_cells(session, run.id)
    whole = {(v, ld) for _, v, sc, ld in cells if sc == ALL}   # a load level's all-scenarios cell, when it has one
    out = []
    for cell, variant, scenario, load in cells:
        if variant not in variants or (scenario != ALL and (variant, load) in whole):
            continue
        reps = counted_repetitions(cell, "throughput")
        on = [r for r in reps if (variant, load, starts.get(r.position if r.position is not None else -1)) in profiled]
        off = [r for r in reps if r not in on]
        if len(on) >= 2 and len(off) >= 2:
            result = compare(off, on, direction="higher", kind="mean")
            out.append(ProfilerCostOut(variant=variant, scenario=scenario, load=load, throughput=_ab(result)))
    return out


def _pick(found: Found, run: Run, variant: str, load: str | None, scenario: str | None) -> tuple[str, str]:
    """The load level and scenario asked for, or the variant's first profiled ones."""
    mine = [(sc, ld) for _, v, sc, ld in found if v == variant]
    if not mine:
        raise NotFound(f"run '{run.slug}' has no profile of variant '{variant}'")
    loads = list(dict.fromkeys(ld for _, ld in mine))
    chosen_load = load or loads[0]
    if chosen_load not in loads:
        raise NotFound(f"run '{run.slug}' has no profile of variant '{variant}' at load '{chosen_load}' "
                       f"(profiled: {', '.join(loads)})")
    scenarios = list(dict.fromkeys(sc for sc, ld in mine if ld == chosen_load))
    chosen = scenario or (ALL if ALL in scenarios else scenarios[0])
    if chosen not in scenarios:
        raise NotFound(f"run '{run.slug}' has no profile of variant '{variant}' in scenario '{chosen}' "
                       f"(profiled: {', '.join(scenarios)})")
    return chosen_load, chosen


def _reps(found: Found, run: Run, variant: str, load: str, scenario: str) -> tuple[list[tree.Rep], list[str]]:
    reps, agent = [], []
    for p, v, sc, ld in found:
        if (v, sc, ld) != (variant, scenario, load):
            continue
        if not p.requests:
            raise InvalidRequest(f"run '{run.slug}': the profile of variant '{variant}' in step {p.step} has no "
                                 f"request count to normalise by (its step has no sample file)",
                                 code=ErrorCode.PROFILE_NOT_NORMALISED)
        reps.append(tree.Rep(p.frames, p.stacks, p.weights, int(p.requests), p.step, p.agent_packages))
        agent += [a for a in p.agent_packages if a not in agent]
    return reps, agent


def _flame_out(run: str, variant: str, load: str, scenario: str, f: tree.Flame) -> FlameOut:
    return FlameOut(run=run, variant=variant, load=load, scenario=scenario, repetitions=f.repetitions,
                    total=f.total, hidden=f.hidden,
                    nodes=[FlameNodeOut(id=n.id, parent=n.parent, name=n.name, package=n.package, agent=n.agent,
                                        total=n.total, self=n.self, reference_total=n.reference_total,
                                        delta_total=n.delta_total, delta_self=n.delta_self) for n in f.nodes])


def flame_graph(session: Session, principal: Principal, slug: str, variant: str, load: str | None,
                scenario: str | None) -> FlameOut:
    run, found = _run(session, principal, slug)
    load, scenario = _pick(found, run, variant, load, scenario)
    reps, agent = _reps(found, run, variant, load, scenario)
    return _flame_out(run.slug, variant, load, scenario, tree.flame(reps, agent))


def _row(r: tree.Row) -> CpuRowOut:
    return CpuRowOut(name=r.name, group=r.group, agent=r.agent, self=_ab(r.self_), total=_ab(r.total),
                     attributed=_ab(r.attributed) if r.attributed is not None else None)


def diff(session: Session, principal: Principal, slug: str, variant: str | None, reference: str | None,
         load: str | None, scenario: str | None, base: str | None = None) -> ProfileDiffOut:
    """`variant` of run `slug` minus `reference` of run `base` (default: this run; its reference variant, or
    across runs the same variant). `base` "previous": the project's latest run before this one (same environment)
    with a profile of the variant at the load level, the other side of a change point."""
    run, found = _run(session, principal, slug)
    if variant is None and base is not None and base != slug:
        # across runs: the first profiled variant that is not this run's reference (else any)
        profiled = list(dict.fromkeys(v for _, v, _, _ in found))
        own_reference = repository.reference_variant(session, run.id)
        variant = next((v for v in profiled if v != own_reference), profiled[0] if profiled else None)
        if variant is None:
            raise NotFound(f"run '{run.slug}' has no profiles")
    if base == PREVIOUS:
        assert variant is not None
        load, scenario = _pick(found, run, variant, load, scenario)
        base = repository.previous_profiled_run(session, run, variant, load)
        if base is None:
            raise NotFound(f"no run before '{run.slug}' has a profile of variant '{variant}' at load '{load}'")
    if base is None or base == slug:
        base_run, base_found = run, found
        reference = reference or repository.reference_variant(session, run.id)
    else:
        base_run, base_found = _run(session, principal, base)
    if variant is None:   # within the run: the first profiled variant that is not its reference
        others = [v for v in dict.fromkeys(v for _, v, _, _ in found) if v != reference]
        if not others:
            raise NotFound(f"run '{run.slug}' has no profiled variant to compare with its reference")
        variant = others[0]
    reference = reference or variant
    if base_run is run and reference == variant:
        raise InvalidRequest(f"variant '{variant}' is the reference: name another variant, or a base run",
                             code=ErrorCode.PROFILE_AGAINST_ITSELF)
    load, scenario = _pick(found, run, variant, load, scenario)
    _pick(base_found, base_run, reference, load, scenario)
    ref_reps, ref_agent = _reps(base_found, base_run, reference, load, scenario)
    var_reps, var_agent = _reps(found, run, variant, load, scenario)
    agent = list(dict.fromkeys([*var_agent, *ref_agent]))
    whole = tree.whole_difference(ref_reps, var_reps)
    packages, frames = tree.rows(ref_reps, var_reps, agent)
    consistency = None
    if base_run is run:
        consistency = _consistency(session, run, reference, variant, load, whole, var_reps)
    flame = tree.differential(ref_reps, var_reps, agent)
    return ProfileDiffOut(run=run.slug, base=base_run.slug, variant=variant, reference=reference, load=load,
                          scenario=scenario, flame=_flame_out(run.slug, variant, load, scenario, flame),
                          whole=_ab(whole), packages=[_row(r) for r in packages], frames=[_row(r) for r in frames],
                          consistency=consistency)


def _consistency(session: Session, run: Run, reference: str, variant: str, load: str, profile: AbResult,
                 var_reps: Sequence[tree.Rep]) -> ConsistencyOut:
    ref_cell = repository.resource_cell(session, run.id, reference, ALL, load)
    var_cell = repository.resource_cell(session, run.id, variant, ALL, load)
    if ref_cell is None or var_cell is None:
        return ConsistencyOut(profile=_ab(profile), sampled=None, gap_pct=None, coverage_pct=None, agree=None)
    a = reported_repetitions(ref_cell, "cpu_s_per_1k")
    b = reported_repetitions(var_cell, "cpu_s_per_1k")
    if a and b:
        sampled = compare(list(a), list(b), direction="lower", kind="mean", scale=1000.0)
    else:   # one repetition a side: the values only
        sampled = compare([float(ref_cell.cpu_s_per_1k or 0) * 1000.0], [float(var_cell.cpu_s_per_1k or 0) * 1000.0],
                          direction="lower", kind="mean")
    gap = None
    if sampled.abs_diff:
        gap = (profile.abs_diff - sampled.abs_diff) / abs(sampled.abs_diff) * 100.0
    var_total = tree.totals(var_reps).whole
    sampled_var = float(var_cell.cpu_s_per_1k or 0) * 1000.0
    coverage = (math.fsum(var_total) / len(var_total)) / sampled_var * 100.0 if sampled_var and var_total else None
    agree = None
    bounds = (profile.ci_low, profile.ci_high, sampled.ci_low, sampled.ci_high)
    if all(math.isfinite(x) for x in bounds):
        agree = profile.ci_low <= sampled.ci_high and sampled.ci_low <= profile.ci_high
    return ConsistencyOut(profile=_ab(profile), sampled=_ab(sampled), gap_pct=gap, coverage_pct=coverage, agree=agree)

"""A run's profile files into `Profile` rows, in the ingest's transaction (called by `ingest.service`).

Files of one step's profile of one variant (a JFR recording's stacks; the pieces of a Go profile) become one
row: their stacks merged, weights in CPU ms. The row's `requests` is the step's request count for the
variant at that load level, counted from the step's sample files (the same variant, load and `started_ms`),
else the count the upload gave (`profile.requests`); the API divides by it (CPU-ms per 1,000 requests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from benchtrail.ingest.model import LoadSpec, ParseError
from benchtrail.models import Profile, RunFile
from benchtrail.ingest.parsers.profiles import Stacks, read_collapsed, read_document, read_pprof


@dataclass(slots=True)
class PendingProfile:
    variant: str
    scenario: str
    load: LoadSpec
    step: int
    repetition: int
    runtime: str
    started_ms: int | None
    requests: int | None
    stacks: Stacks
    raw_files: list[int] = field(default_factory=list)
    agent_packages: list[str] = field(default_factory=list)


def read(run_file: RunFile, path: Path) -> Stacks | None:
    """The stacks of one profile file; None for a raw JFR recording (kept for download only)."""
    profile = run_file.options.get("profile") or {}
    if run_file.format == "jfr":
        return None
    if run_file.format == "pprof":
        return read_pprof(path)
    if run_file.format == "collapsed":
        return read_collapsed(path, str(profile.get("runtime")), float(profile.get("period_ms") or 0),
                              source="py-spy" if profile.get("runtime") == "python" else "async-profiler")
    window = profile.get("window_ms")
    return read_document(path, (float(window[0]), float(window[1])) if window else None)


def add(pending: dict[tuple[str, str, str, int], PendingProfile], run_file: RunFile, stacks: Stacks,
        scenario: str, load: LoadSpec, files_by_position: dict[int, int]) -> None:
    """File `stacks` under its step's profile (merging pieces of one step)."""
    profile: dict[str, Any] = run_file.options.get("profile") or {}
    step = int(profile.get("step") if profile.get("step") is not None else run_file.position)
    key = (run_file.variant, scenario, load.key, step)
    raw = profile.get("raw_file")
    raw_ids = [files_by_position[int(raw)]] if raw is not None and int(raw) in files_by_position else [run_file.id]
    current = pending.get(key)
    if current is None:
        pending[key] = PendingProfile(
            run_file.variant, scenario, load, step, int(profile.get("repetition") or 1), str(profile["runtime"]),
            run_file.options.get("started_ms"), profile.get("requests"), stacks, raw_ids,
            list(profile.get("agent_packages") or []))
    else:
        if current.stacks.runtime != stacks.runtime:
            raise ParseError(f"step {step} of variant '{run_file.variant}' has profiles of two runtimes "
                             f"({current.stacks.runtime}, {stacks.runtime})", field="profile.runtime")
        current.stacks.merge(stacks)
        current.raw_files += [r for r in raw_ids if r not in current.raw_files]


def write(session: Session, run_id: int, pending: dict[tuple[str, str, str, int], PendingProfile],
          ids: dict[str, dict[str, int]], step_requests: dict[tuple[str, int | None, str], int]) -> int:
    """The rows; `ids` maps variant/scenario/load names to the rows written by the ingest."""
    rows = []
    for p in pending.values():
        counted = step_requests.get((p.variant, p.started_ms, p.load.key)) if p.started_ms is not None else None
        s = p.stacks
        rows.append(Profile(
            run_id=run_id, variant_id=ids["variant"][p.variant], scenario_id=ids["scenario"][p.scenario],
            load_id=ids["load"][p.load.key], repetition=p.repetition, step=p.step, runtime=p.runtime,
            source=s.source, period_ms=s.period_ms, samples=s.samples, cpu_ms=s.cpu_ms,
            requests=counted or p.requests, outside_window=s.outside_window, truncated=s.truncated,
            frames=s.frames, stacks=[list(st) for st in s.stacks], weights=s.weights,
            agent_packages=p.agent_packages, raw_files=p.raw_files,
            meta={"span_ms": list(s.span_ms) if s.span_ms else None, "started_ms": p.started_ms}))
    session.add_all(rows)
    return len(rows)

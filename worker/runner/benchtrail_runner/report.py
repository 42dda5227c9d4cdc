"""What a runner sends back through the API once a plan has run: the raw tool outputs, a
Benchtrail JSON file with the targets' resources (per variant and load level) and its load
generators' CPU per step. Criteria and validity are judged by ingest, as for an upload."""

from __future__ import annotations

import json
import os
import platform
import socket
from pathlib import Path
from typing import Any

import psutil

from . import profiling
from .execute import PlanResult, window_ms
from .plan import LoadSpec, Plan

RESOURCE_SERIES = ("cpu_pct", "rss_mb", "heap_mb")


def _load_json(spec: Any) -> dict[str, Any]:
    return {"kind": spec.kind, "value": spec.value, "requests": spec.requests, "duration_s": spec.duration_s}


def resources_document(result: PlanResult, levels: Any = None) -> dict[str, Any] | None:
    """Resources as Benchtrail JSON: one all-scenarios cell (scenario null) per variant and load,
    so they sit next to the latency of the same load level."""
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for step in result.steps:
        if step.step.phase != "measure":
            continue
        spec = (levels or result.plan.loads)[step.step.load_index].spec
        for variant, res in step.resources.items():
            series = []
            for metric in RESOURCE_SERIES:
                points = [[p.t_ms, getattr(p, metric)] for p in res.points if getattr(p, metric) is not None]
                if points:
                    series.append({"metric": metric, "interval_ms": None, "points": points})
            entry: dict[str, Any] = {"load": _load_json(spec), "stats": res.stats()}
            if series:
                entry["series"] = series
            by_variant.setdefault(variant, []).append(entry)
        for (variant, process), res in step.processes.items():
            by_variant.setdefault(variant, []).append(_process_entry(spec, process, res))
    if not by_variant:
        return None
    return {"format": "benchtrail", "version": 1, "tool": "benchtrail-runner",
            "variants": [{"name": v, "scenarios": [{"name": None, "loads": loads}]} for v, loads in by_variant.items()]}


def _process_entry(spec: LoadSpec, process: str, res: Any) -> dict[str, Any]:
    """One named process of a variant (plan `processes`) in one measured step: its own cell
    (Benchtrail JSON `process`), so it gets its own columns, trail and overhead."""
    series = [{"metric": m, "interval_ms": None,
               "points": [[p.t_ms, getattr(p, m)] for p in res.points if getattr(p, m) is not None]}
              for m in RESOURCE_SERIES]
    return {"load": _load_json(spec), "process": process, "stats": res.stats(),
            "series": [s for s in series if s["points"]]}


def host_environment() -> dict[str, Any]:
    """The load host's hardware and OS: the environment of a run whose targets run on this host
    (as in the demo); trails compare only runs with the same fingerprint."""
    return {"name": f"{socket.gethostname()} (runner host)", "cpus": os.cpu_count(),
            "memory_mb": psutil.virtual_memory().total // 2**20,
            "os": f"{platform.system()} {platform.release()}", "attributes": {"recorded_by": "runner"}}


def loadgen(result: PlanResult) -> list[dict[str, Any]]:
    """The load generators' CPU in each measured step, for ingest's saturation check."""
    cores = psutil.cpu_count() or 1
    return [{"step": s.step.index, "load": s.step.load.spec.label, "cpu_s": s.run.loadgen_cpu_s,
             "wall_s": s.run.wall_s, "max_cpu_pct": s.run.loadgen_max_cpu_pct, "cores": cores}
            for s in result.steps if s.run is not None and s.step.phase == "measure"]


def results_upload(result: PlanResult, workdir: Path, whole: Plan | None = None) -> tuple[dict[str, Any], list[Path]]:
    """Upload metadata (files in order, load-generator CPU) and the files to send. A share of a run over
    several generators (`whole`: the plan the run was started with) files its outputs under the whole
    run's load levels, so the shares' outputs merge into the same cells."""
    entries: list[dict[str, Any]] = []
    paths: list[Path] = []
    loads = (whole or result.plan).loads
    # The measured outputs, then the warm-ups': those are kept in series (the overlays show the warm-up)
    # but never enter cells. Each is filed under the load level it measures or warms up (not the shortened
    # warm-up load), with the time its step started: a hey CSV counts its times from its own start.
    for phase in ("measure", "warmup"):
        for step in result.steps:
            if step.step.phase != phase or step.run is None:
                continue
            for output in step.run.outputs:
                entry: dict[str, Any] = {"variant": output.variant, "format": output.format,
                                         "load": _load_json(loads[step.step.load_index].spec),
                                         "started_ms": step.run.started_ms}
                if phase == "warmup":
                    entry["series_only"] = True
                if output.scenario is not None:
                    entry["scenario"] = output.scenario
                entries.append(entry)
                paths.append(output.path)
    # CPU profiles: a raw JFR recording is followed by the stacks read from it (`raw_file`: its position).
    for step in result.steps:
        if step.step.phase != "measure" or step.run is None or not step.profiles:
            continue
        raw_at: dict[Path, int] = {}
        for f in profiling.finish(step.profiles):
            window = window_ms(step.run, f.variant)
            profile: dict[str, Any] = {"runtime": f.runtime, "repetition": step.step.repetition, "step": step.step.index,
                                       "window_ms": list(window) if window else None,
                                       "agent_packages": list(f.agent_packages),
                                       "period_ms": profiling.PERIOD_MS}
            if f.raw is not None:
                profile["raw_file"] = raw_at[f.raw]
            entry = {"variant": f.variant, "format": f.format, "load": _load_json(loads[step.step.load_index].spec),
                     "started_ms": step.run.started_ms, "profile": profile}
            if len(step.step.scenarios) == 1:
                entry["scenario"] = step.step.scenarios[0]
            raw_at[f.path] = len(entries)
            entries.append(entry)
            paths.append(f.path)
    doc = resources_document(result, loads)
    if doc is not None:
        path = workdir / "resources.benchtrail.json"
        path.write_text(json.dumps(doc))
        first_variant = doc["variants"][0]["name"]
        entries.append({"variant": first_variant, "format": "benchtrail-json"})
        paths.append(path)
    meta = {"files": entries, "loadgen": loadgen(result), "environment": host_environment()}
    return meta, paths

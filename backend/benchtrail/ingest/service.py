"""Persisting parsed results: one run's cells, series and trails, in the caller's transaction.

`ingest_run` is what the `results.ingest` task calls. It either writes everything for the run or
raises; the task boundary rolls back and records the failure, so no half-ingested run remains.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl
from sqlalchemy.orm import Session

from benchtrail import jobs, storage
from benchtrail.errors import Conflict, ErrorCode, NotFound
from benchtrail.ingest import criteria as criteria_judge
from benchtrail.ingest.cells import CellsResult, SampleCounts, Summariser, interval_counts, union_series
from benchtrail.ingest.detect import ingest_file
from benchtrail.ingest.histogram import merge as merge_histograms
from benchtrail.ingest.histogram import decode as decode_histogram
from benchtrail.ingest.histogram import percentile_ms, value_at_percentile_us
from benchtrail.ingest.model import RELATIVE_TIME, LoadSpec, ParseError
from benchtrail.ingest.detect import PROFILE_FORMATS
from benchtrail.ingest.options import load_from, options_for
from benchtrail.ingest import repository, validity
from benchtrail import metrics
from benchtrail.metrics import PERCENTILES
from benchtrail.models import Cell, Load, Run, RunFile, Scenario, Series, Variant
from benchtrail.ingest import profiles as profile_ingest
from benchtrail.plans import service as plans
from benchtrail.plans.model import split_count
from benchtrail.projects import service as projects_service
from benchtrail.runstate import lifecycle
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate.lifecycle import AnalysisStatus, RunStatus
from benchtrail.ingest.packed import open_blob_for_parsing

CELL_COLUMNS = frozenset(metrics.names("stored"))
INTEGER_COLUMNS = frozenset({"count", "errors"})
# The scenario name of a load level's all-scenarios cell (JMeter's TOTAL row, resources of the process).
ALL_SCENARIOS = "*"


class IngestFailed(Exception):
    def __init__(self, filename: str, reason: str, line: int | None = None, field: str | None = None):
        self.detail = {"file": filename, "line": line, "field": field, "reason": reason}
        where = [f"file '{filename}'"] + ([f"line {line}"] if line else []) + ([f"field '{field}'"] if field else [])
        super().__init__(f"{', '.join(where)}: {reason}")


def trail_hash(project_id: int, env_fingerprint: str, scenario: str, load_key: str, variant: str,
               mode: str, process: str = "") -> str:
    identity: list[object] = [project_id, env_fingerprint, scenario, load_key, variant, mode]
    if process:   # a named process's trail; the variant's own trails keep their identity
        identity.append(process)
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()


@dataclass(slots=True)
class _PendingCell:
    variant: str
    scenario: str
    load: LoadSpec
    mode: str
    parts: list[dict[str, Any]]
    process: str = ""


# What each sample-based repetition keeps in `Cell.repetitions` (besides its histogram, position and,
# for a cell with a single repetition, its timeline): its own exact statistics.
REPETITION_STATS = ("count", "errors", "duration_s", "throughput", "latency_mean", "latency_min", "latency_max",
                    *(f"latency_{name}" for name, _ in PERCENTILES))


def _values_of(cell: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in (cell.stats or {}).items():
        if value is None:
            continue
        if key in CELL_COLUMNS:
            values[key] = int(value) if key in INTEGER_COLUMNS else float(value)
        else:
            extra[key] = value
    if getattr(cell, "histogram", None) is not None:
        values["histogram"] = cell.histogram
    if getattr(cell, "timeline", None) is not None:
        values["timeline"] = cell.timeline
    if getattr(cell, "unit", None) is not None:
        values["score_unit"] = cell.unit
    if getattr(cell, "params", None):
        values["params"] = dict(cell.params)
    if getattr(cell, "replicates", None):
        values["replicates"] = [float(x) for x in cell.replicates]
    values["is_transaction"] = bool(getattr(cell, "is_transaction", False))
    values["extra"] = extra
    return values


def combine(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One cell from what several files say about it. Sample-based parts are repetitions of the same
    measurement: counts add up, histograms merge (so percentiles stay exact over all samples), the
    mean is weighted and throughput is total samples over total measured time. Reported parts (a
    resource file, a summary) fill what the samples do not give; repeated reported values average.

    `repetitions` keeps every sample-based part as the A/B analysis needs it (`repetition_record`),
    in the run's execution order (a part's `position`: its file's position in the run)."""
    sampled = sorted((p for p in parts if "histogram" in p), key=lambda p: p.get("position", 0))
    reported = [{k: v for k, v in p.items() if k != "position"} for p in parts if "histogram" not in p]
    out: dict[str, Any] = {"source": "samples" if sampled else "reported", "extra": {},
                           "repetitions": [repetition_record(p, with_timeline=len(sampled) == 1) for p in sampled]}
    if len(sampled) == 1:
        out.update({k: v for k, v in sampled[0].items() if k not in ("extra", "timeline", "position", "latency_step_us")})
        out["extra"].update(sampled[0]["extra"])
    elif sampled:
        out.update(_merge_repetitions(sampled))
    if reported:
        numeric = {k for p in reported for k, v in p.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        for key in numeric:
            values = [p[key] for p in reported if key in p]
            if out.get(key) is None:
                mean = sum(values) / len(values)
                out[key] = int(round(mean)) if key in INTEGER_COLUMNS else mean
        for p in reported:
            for key, value in p.items():
                if key != "extra" and key not in numeric and out.get(key) in (None, [], {}):
                    out[key] = value
            out["extra"].update(p["extra"])
        if len(reported) > 1:
            out["extra"]["repetitions_reported"] = [{k: v for k, v in p.items() if k in numeric} for p in reported]
    out.setdefault("is_transaction", False)
    return out


def repetition_record(part: dict[str, Any], *, with_timeline: bool) -> dict[str, Any]:
    """One repetition as `Cell.repetitions` stores it: `position` (execution order in the run),
    its exact statistics (ms, as a cell of that repetition alone would have them), `histogram`
    (HDR, µs) and the step its file recorded latency in (`latency_step_us`, when it shows one); the
    cell's only repetition has its `timeline` (see `ingest.cells`) instead of a histogram, which would
    repeat the cell's."""
    record: dict[str, Any] = {"position": part.get("position", 0)}
    record.update({k: part[k] for k in REPETITION_STATS if part.get(k) is not None})
    if part.get("latency_step_us"):
        record["latency_step_us"] = part["latency_step_us"]   # for the A/B interval (`analysis.ab`)
    if with_timeline:
        # The cell's only repetition: its histogram is the cell's own (`Cell.histogram`), not stored twice.
        if part.get("timeline") is not None:
            record["timeline"] = part["timeline"]
    else:
        record["histogram"] = part["histogram"]
    return record


def _merge_repetitions(parts: list[dict[str, Any]]) -> dict[str, Any]:
    count = sum(p.get("count") or 0 for p in parts)
    merged_hist = merge_histograms([p["histogram"] for p in parts])
    out: dict[str, Any] = {
        "histogram": merged_hist, "count": count, "errors": sum(p.get("errors") or 0 for p in parts),
        "latency_min": min(p["latency_min"] for p in parts if p.get("latency_min") is not None),
        "latency_max": max(p["latency_max"] for p in parts if p.get("latency_max") is not None),
        "latency_mean": sum((p.get("latency_mean") or 0) * (p.get("count") or 0) for p in parts) / count if count else None,
        "duration_s": sum(p.get("duration_s") or 0 for p in parts),
        "is_transaction": parts[0]["is_transaction"],
    }
    out["throughput"] = count / out["duration_s"] if out["duration_s"] else None
    for name, pct in PERCENTILES:
        out[f"latency_{name}"] = percentile_ms(merged_hist, pct)
    keep = ("count", "errors", "throughput", "duration_s", "latency_mean", "latency_p50", "latency_p75",
            "latency_p90", "latency_p95", "latency_p99")
    out["extra"] = {"repetitions": [{k: p.get(k) for k in keep} for p in parts]}
    return out


def merge_shares(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parts of a run over several generators as `combine` takes them: the sample-based parts of one
    position (the same step, run by every share at once) become one part. Its histogram is the shares'
    HDR histograms merged (so every percentile is the nearest-rank percentile of the union of the
    shares' samples, as one file of all of them would give), counts and errors add up, min, max and the
    mean are exact, and the throughput is the union's count over the union's window (first start to
    last end over every share). Parts without a share are returned as they are."""
    if not any("share" in p for p in parts):
        return parts
    out: list[dict[str, Any]] = []
    groups: dict[int, list[dict[str, Any]]] = {}
    for p in parts:
        if "share" in p and "histogram" in p:
            groups.setdefault(p["position"], []).append(p)
        else:
            out.append({k: v for k, v in p.items() if k not in ("share", "window")})
    for position, group in groups.items():
        if len(group) == 1:
            out.append({k: v for k, v in group[0].items() if k not in ("share", "window")})
            continue
        count = sum(int(p.get("count") or 0) for p in group)
        errors = sum(int(p.get("errors") or 0) for p in group)
        lo = min(p["latency_min"] for p in group if p.get("latency_min") is not None)
        hi = max(p["latency_max"] for p in group if p.get("latency_max") is not None)
        merged = merge_histograms([p["histogram"] for p in group])
        hist = decode_histogram(merged)
        windows = [p["window"] for p in group if p.get("window")]
        duration = (max(w[1] for w in windows) - min(w[0] for w in windows)) / 1000.0 \
            if len(windows) == len(group) else max(float(p.get("duration_s") or 0) for p in group)
        part: dict[str, Any] = {
            "histogram": merged, "count": count, "errors": errors, "latency_min": lo, "latency_max": hi,
            "latency_mean": sum(float(p.get("latency_mean") or 0) * int(p.get("count") or 0) for p in group) / count
            if count else None,
            "duration_s": duration, "throughput": count / duration if duration > 0 else None,
            "is_transaction": group[0]["is_transaction"], "position": position,
            "extra": {"error_rate": errors * 100.0 / count if count else None, "generators": len(group)},
        }
        steps = [p.get("latency_step_us") for p in group]
        if all(steps):
            part["latency_step_us"] = math.gcd(*steps)   # the step of the union's latencies
        for name, pct in PERCENTILES:
            part[f"latency_{name}"] = value_at_percentile_us(hist, pct, exact_min=float(round(lo * 1000.0)),
                                                             exact_max=float(round(hi * 1000.0))) / 1000.0
        out.append(part)
    return out


class RunWriter:
    """Collects cells and series for one run, combining what several files say about the same cell
    (repetitions of a measurement; a JTL's latencies and a resource file's CPU for the same load)."""

    def __init__(self, session: Session, run: Run, env_fingerprint: str) -> None:
        self.session = session
        self.run = run
        self.env_fingerprint = env_fingerprint
        self.cells: dict[tuple[str, str, str, str, str], _PendingCell] = {}
        self.series: list[tuple[str, Any]] = []
        self.variant_order: list[str] = []
        self.scenario_order: list[str] = []
        self.loads: dict[str, LoadSpec] = {}
        self._calls = 0
        self.findings: list[validity.Finding] = []          # per-file checks (stalls)
        self.facts: list[tuple[validity.FileFacts, str]] = []   # per measured file and load key
        self.unanswered: dict[tuple[str, str, str], int] = {}          # (variant, scenario, load key)
        self.arrivals: dict[tuple[str, str, str], list[float]] = {}    # ... -> per file arrival rates
        # written cells' values by (variant, scenario, load key, mode, process)
        self.combined: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        self.generators = run_meta.of(run).generators
        self.shared_series: set[int] = set()    # series from a share's file (merged by time: `_points`)
        # (variant, load key) -> (interval, interval counts, load spans) of each clock-timed file, and those
        # files' series: see `add_counts` and `_union_series`.
        self.counts: dict[tuple[str, str], list[tuple[int, pl.DataFrame, pl.DataFrame]]] = {}
        self.counted_series: set[int] = set()
        self.laid_end: dict[str, int] = {}      # variant -> end of its files laid end to end (`lay_out`)
        # a share's arrival rate per (variant, scenario, load key) and position: the shares' add up
        self.share_arrivals: dict[tuple[tuple[str, str, str], int], float] = {}
        # CPU profiles by (variant, scenario, load key, step), the measured requests of each step by (variant,
        # started_ms, load key) that normalise them, and the run's raw recordings by file position
        self.profiles: dict[tuple[str, str, str, int], profile_ingest.PendingProfile] = {}
        self.step_requests: dict[tuple[str, int | None, str], int] = {}
        self.files_by_position: dict[int, int] = {}
        self.ids: dict[str, dict[str, int]] = {}

    def add_cell(self, variant: str, cell: Any, position: int | None = None, share: int | None = None,
                 latency_step_us: int | None = None) -> None:
        """`position`: where the cell's file ran in the run (its file position); by default the order
        of the calls. `share`: the load generator whose file it is, in a run over several generators
        (the shares' parts of one position ran at the same time: `merge_shares`). `latency_step_us`: the
        step its file recorded latency in (`validity.latency_step_us`), kept with the repetition."""
        scenario = cell.scenario if cell.scenario is not None else ALL_SCENARIOS
        load, mode = cell.load, (getattr(cell, "mode", None) or "")
        process = getattr(cell, "process", None) or ""
        self._note(variant, scenario, load)
        key = (variant, scenario, load.key, mode, process)
        pending = self.cells.setdefault(key, _PendingCell(variant, scenario, load, mode, [], process))
        values = _values_of(cell)
        values["position"] = position if position is not None else self._calls
        self._calls += 1
        if latency_step_us:
            values["latency_step_us"] = latency_step_us
        if share is not None:
            values["share"] = share
            if getattr(cell, "first_start_ms", None) is not None and getattr(cell, "last_end_ms", None):
                values["window"] = (float(cell.first_start_ms), float(cell.last_end_ms))
        pending.parts.append(values)

    def add_series(self, variant: str, series: Any, share: int | None = None) -> None:
        self._note(variant, series.scenario, series.load)
        self.series.append((variant, series))
        if share is not None:
            self.shared_series.add(id(series))

    def add_counts(self, variant: str, result: CellsResult, shift_ms: int) -> None:
        """A sampled file whose series are at clock times (or a share's: the shares ran together): its counts
        per interval and when it ran, kept until `write`, where files that covered the same intervals are
        combined."""
        assert result.counts is not None and result.spans is not None and result.interval_ms
        interval_ms, series = result.interval_ms, result.series
        table = interval_counts(result.counts.table, interval_ms, shift_ms)
        spans = result.spans.with_columns(pl.col("start", "end") + shift_ms)
        for (load_key,), part in table.group_by("load_key"):
            self.counts.setdefault((variant, str(load_key)), []).append(
                (interval_ms, part, spans.filter(pl.col("load_key") == str(load_key))))
        self.counted_series.update(id(s) for s in series)

    def lay_out(self, variant: str, result: CellsResult) -> int:
        """Where a file whose times count from its own start, uploaded without that start (`started_ms`),
        begins on the run's time axis: at the first whole interval after the previous such file of its
        variant. Such files are laid end to end in upload order, as if they ran one after another (two
        repetitions both at 0 drew over each other, zigzagging); each variant begins at 0, so the variants'
        lines overlay."""
        interval = result.interval_ms or 1
        shift = -(-self.laid_end.get(variant, 0) // interval) * interval
        if result.spans is not None and result.spans.height:
            self.laid_end[variant] = shift + math.ceil(result.spans["end"].max())
        return shift

    def _union_series(self) -> dict[tuple[str, str | None, str, str, str], Any]:
        """The series of each variant and load level whose files covered some interval together, from
        the counts of all of them: throughput and errors add up, percentiles are the union's (one file's
        series cannot give them). Only when those files share one interval."""
        out: dict[tuple[str, str | None, str, str, str], Any] = {}
        for (variant, load_key), files in self.counts.items():
            intervals = {interval for interval, _, _ in files}
            if len(files) < 2 or len(intervals) != 1:
                continue
            seen: set[int] = set()
            overlap = False
            for _, table, _ in files:
                ts = set(table["t"].unique().to_list())
                overlap = overlap or bool(seen & ts)
                seen |= ts
            if overlap:
                for s in union_series([t for _, t, _ in files], [sp for _, _, sp in files], self.loads,
                                      intervals.pop()):
                    out[(variant, s.scenario, load_key, s.metric, "")] = s
        return out

    def _note(self, variant: str, scenario: str | None, load: LoadSpec) -> None:
        if variant not in self.variant_order:
            self.variant_order.append(variant)
        if scenario is not None and scenario not in self.scenario_order:
            self.scenario_order.append(scenario)
        self.loads.setdefault(load.key, load)

    def write(self, reference: str) -> None:
        s, run = self.session, self.run
        variants = {}
        declared = run_meta.of(run).variants
        order = [v for v in declared if v in self.variant_order] + \
                [v for v in self.variant_order if v not in declared]
        for i, name in enumerate(order):
            variants[name] = Variant(run_id=run.id, name=name, is_reference=(name == reference), position=i)
        if reference not in variants and variants:
            first = next(iter(variants.values()))
            first.is_reference = True
        scenarios = {name: Scenario(run_id=run.id, name=name, position=i)
                     for i, name in enumerate(self.scenario_order)}
        loads = {key: Load(run_id=run.id, key=key, kind=spec.kind, value=spec.value, requests=spec.requests,
                           duration_s=spec.duration_s, label=spec.label)
                 for key, spec in sorted(self.loads.items(), key=lambda kv: _load_sort(kv[1]))}
        s.add_all([*variants.values(), *scenarios.values(), *loads.values()])
        s.flush()
        self.ids = {"variant": {k: v.id for k, v in variants.items()},
                    "scenario": {k: v.id for k, v in scenarios.items()}, "load": {k: v.id for k, v in loads.items()}}
        trail_ids = self._trail_ids({(c.scenario, c.load.key, c.variant, c.mode, c.process)
                                     for c in self.cells.values()})
        rows = []
        for key, c in self.cells.items():
            values = combine(merge_shares(c.parts))
            self.combined[key] = values
            rows.append(Cell(run_id=run.id, variant_id=variants[c.variant].id, scenario_id=scenarios[c.scenario].id,
                             load_id=loads[c.load.key].id, mode=c.mode, process=c.process,
                             trail_id=trail_ids[(c.scenario, c.load.key, c.variant, c.mode, c.process)],
                             **{"params": {}, "replicates": [], **values}))
        s.add_all(rows)
        unions = self._union_series()
        for key, parts in self._series_by_key().items():
            variant, scenario, load_key, metric, process = key
            union = unions.get(key)
            if union is not None:
                parts = [p for p in parts if id(p) not in self.counted_series] + [union]
            points = self._points(metric, parts)
            s.add(Series(run_id=run.id, variant_id=variants[variant].id,
                         scenario_id=scenarios[scenario].id if scenario is not None else None,
                         load_id=loads[load_key].id, metric=metric, process=process,
                         interval_ms=parts[0].interval_ms,
                         t_ms=[t for t, _ in points], values=[v for _, v in points]))
        s.flush()

    def _points(self, metric: str, parts: list[Any]) -> list[tuple[int, float]]:
        """A series' points in time order. The shares of a run over several generators report the same
        intervals; sampled shares were combined from their counts (`_union_series`), so this is for
        series a tool reported (Locust's history): their throughput and errors add up; for a latency
        percentile the highest share's value of the interval is kept (a percentile of the union cannot be
        read from the shares' series; the cells' percentiles are exact)."""
        points = sorted((int(t), float(v)) for part in parts for t, v in zip(part.t_ms, part.values))
        if not any(id(p) in self.shared_series for p in parts):
            return points
        merged: dict[int, float] = {}
        for t, v in points:
            if t in merged:
                merged[t] = merged[t] + v if metric in ("throughput", "errors") else max(merged[t], v)
            else:
                merged[t] = v
        return sorted(merged.items())

    def finish_shares(self) -> None:
        """The arrival rates of concurrent shares, added up per step, as the run's arrival rates."""
        totals: dict[tuple[str, str, str], dict[int, float]] = {}
        for (key, position), rate in self.share_arrivals.items():
            totals.setdefault(key, {})[position] = rate
        for key, by_position in totals.items():
            self.arrivals.setdefault(key, []).extend(by_position[p] for p in sorted(by_position))

    def _series_by_key(self) -> dict[tuple[str, str | None, str, str, str], list[Any]]:
        """One series per variant, scenario, load, metric and named process: a warm-up and its
        measurement, or the repetitions of a load level, are one line over time."""
        grouped: dict[tuple[str, str | None, str, str, str], list[Any]] = {}
        for variant, series in self.series:
            key = (variant, series.scenario, series.load.key, series.metric, getattr(series, "process", None) or "")
            grouped.setdefault(key, []).append(series)
        return grouped

    def _trail_ids(self, keys: set[tuple[str, str, str, str, str]]) -> dict[tuple[str, str, str, str, str], int]:
        project_id = self.run.project_id
        by_hash = {trail_hash(project_id, self.env_fingerprint, *k): k for k in keys}
        ids = repository.trail_ids(self.session, [
            dict(project_id=project_id, hash=h, env_fingerprint=self.env_fingerprint, scenario=k[0],
                 load_key=k[1], variant=k[2], mode=k[3], process=k[4]) for h, k in by_hash.items()])
        return {by_hash[h]: tid for h, tid in ids.items()}


def _load_sort(spec: LoadSpec) -> tuple[str, float, int]:
    return (spec.kind, spec.value if spec.value is not None else -1, spec.requests or 0)


def ingest_run(session: Session, run_id: int) -> Run | None:
    """Parse every file of a run and write its cells; returns None when there is nothing to do."""
    run = repository.lock_run(session, run_id)
    if run is None or run.status != RunStatus.INGESTING:
        return None
    _measure(session, run)
    lifecycle.transition(run, RunStatus.COMPLETED)
    if (run.progress or {}).get("step") == "ingesting":
        # The runner's last report said the results were being ingested; they are now.
        run.progress = {**run.progress, "step": "ingested"}
    run.heartbeat_at = run.finished_at  # analysis is queued now; the sweeper re-queues it if it is lost
    return run


@dataclass(slots=True)
class Reingested:
    run: Run
    cells_before: int
    cells: int


def reingest_run(session: Session, run_id: int) -> Reingested:
    """Measure a completed run again from its stored files with today's parsers (a parser fixed or a
    measurement added since it was ingested), in the caller's transaction: its variants, scenarios, loads,
    cells and series are replaced (its overheads go with its cells and come back with its analysis), its
    criteria and validity judged again; a manual exclusion stays. Its analysis is queued again, so its
    trails are judged again around its point. A stored file whose bytes no longer match the sha256 they
    were received with is refused (IngestFailed), and so is one today's parser rejects: the caller rolls
    back and the run stays as it was."""
    run = repository.lock_run(session, run_id)
    if run is None:
        raise NotFound(f"run {run_id} not found")
    if run.status != RunStatus.COMPLETED:
        raise Conflict(f"run '{run.slug}' is {run.status}: only a completed run is measured again", code=ErrorCode.RUN_NOT_COMPLETED)
    before = repository.count_cells(session, run.id)
    kept = [row for row in run.validity or [] if row.get("source") == validity.MANUAL]
    repository.delete_measurements(session, run.id)
    writer = _measure(session, run, verify=True)
    run.remeasured_at = datetime.now(timezone.utc)
    if kept:
        run.validity = [*(run.validity or []), *kept]
        run.is_valid = validity.is_valid(run.validity)
    if run.analysis_status != AnalysisStatus.PENDING:
        lifecycle.analysis_transition(run, AnalysisStatus.PENDING)
    jobs.enqueue(session, "analysis.run", run.id)
    return Reingested(run, before, len(writer.combined))


def reingest_targets(session: Session, runs: list[str], projects: list[str]) -> list[tuple[str, int]]:
    """(slug, id) of the runs to measure again, oldest first: the runs named, else the completed runs of the
    projects named, else every completed run. NotFound names any run or project that does not exist."""
    if runs:
        found = repository.runs_by_slug(session, runs)
        missing = [slug for slug in runs if slug not in {s for s, _ in found}]
        if missing:
            raise NotFound(f"no run {', '.join(missing)}")
        return found
    found_projects = {slug: projects_service.by_slug(session, slug) for slug in projects}
    missing = [slug for slug, project in found_projects.items() if project is None]
    if missing:
        raise NotFound(f"no project {', '.join(missing)}")
    return repository.completed_runs(session, [p.id for p in found_projects.values() if p] if projects else None)


def _measure(session: Session, run: Run, *, verify: bool = False) -> RunWriter:
    """Parse the run's files, write its variants, scenarios, loads, cells and series, and judge its
    criteria and validity. `verify`: check each stored file against its sha256 first."""
    env = repository.environment(session, run.environment_id)
    writer = RunWriter(session, run, env.fingerprint if env else "")
    files = repository.files_with_blobs(session, run.id)
    scratch = Path(tempfile.mkdtemp(prefix="ingest-", dir=storage.scratch_dir()))
    try:
        store = storage.get_store()
        writer.files_by_position = {rf.position: rf.id for rf, _ in files if rf.format == "jfr"}
        for run_file, blob in files:
            path = store.local_path(blob.sha256, scratch)
            if verify and storage.sha256_file(path) != blob.sha256:
                raise IngestFailed(run_file.filename, f"the stored file (blob {blob.sha256[:12]}…) no longer has the "
                                   "bytes it was received with: its sha256 differs")
            add_file(writer, run_file, path, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    writer.finish_shares()
    writer.write(reference=run_meta.of(run).reference or "")
    profile_ingest.write(session, run.id, writer.profiles, writer.ids, writer.step_requests)
    expected = expectations(session, run)
    run.criteria = judge_criteria(writer, expected, reference=run_meta.of(run).reference)
    judge_validity(session, run, writer, expected)
    return writer


@dataclass(slots=True)
class Expectations:
    """What the run was asked to measure, for criteria and the per-file checks: a plan run's from its
    stored plan (and the load-generator CPU its runner measured), an upload's from its metadata."""

    criteria: list[Any]                                    # benchtrail.plans.model.Criterion
    requested_rate: dict[str, float]                       # load key -> requested req/s per scenario
    file_checks: bool                                      # judge each file's rate, errors, drops
    loadgen: list[dict[str, Any]]                          # per measured step, from the runner


def expectations(session: Session, run: Run) -> Expectations:
    meta = run_meta.of(run)
    plan = plans.plan_of_run(session, run)
    if plan is not None:
        rates = {load.spec.key: float(load.rate) for load in plan.loads if load.rate}
        return Expectations(list(plan.criteria), rates, True, [s.model_dump() for s in meta.loadgen])
    return Expectations(plans.parse_criteria(meta.criteria), {}, meta.file_checks, [])


def judge_criteria(writer: RunWriter, expected: Expectations, *, reference: str | None) -> list[dict[str, Any]]:
    """The criteria over the written cells (`ingest.criteria`), one row per criterion and cell."""
    if not expected.criteria:
        return []
    labels = {key: spec.label for key, spec in writer.loads.items()}
    cells = {(v, sc, lk): criteria_judge.CellView(
        values, labels.get(lk, lk), writer.unanswered.get((v, sc, lk), 0), tuple(writer.arrivals.get((v, sc, lk), ())))
        for (v, sc, lk, _, process), values in writer.combined.items() if not process}  # whole-variant cells
    return criteria_judge.judge(expected.criteria, cells, reference=reference)


def requested_percentiles(session: Session, run: Run) -> list[tuple[str, float]]:
    """Percentiles someone asked for: the project's analysed metrics and the run's criteria."""
    project = repository.project(session, run.project_id)
    names = set(((project.settings or {}).get("analysis") or {}).get("metrics") or
                ["latency_p75", "latency_p99"]) if project else set()
    names |= {c.get("criterion", "").split()[-3] for c in run.criteria or []
              if isinstance(c, dict) and len(c.get("criterion", "").split()) >= 3}
    return [(m.name, m.percentile) for m in metrics.CATALOG.values() if m.percentile is not None and m.name in names]


def judge_validity(session: Session, run: Run, writer: RunWriter, expected: Expectations | None = None) -> None:
    """Every validity check of the run (benchtrail.ingest.validity), from its files and what it was
    asked to measure; an invalid run's points leave its trails, so it never alerts."""
    expected = expected or expectations(session, run)
    findings: list[validity.Finding] = []
    if expected.file_checks:
        for f, load_key in writer.facts:
            rate = expected.requested_rate.get(load_key)
            if rate and f.share is not None:  # a share is judged against its share of the rate
                rate = rate / writer.generators
            findings += validity.file_checks(f, rate)
    for step in expected.loadgen:
        findings.append(validity.load_generator(float(step["cpu_s"]), float(step["wall_s"]), int(step["cores"]),
                                                float(step.get("max_cpu_pct") or 0.0), load=step.get("load")))
    findings += writer.findings
    labels = {key: spec.label for key, spec in writer.loads.items()}
    cells = [(v, s, labels.get(lk), values) for (v, s, lk, _, proc), values in writer.combined.items()
             if not values.get("is_transaction") and not proc]
    named = [c for c in cells if c[1] != ALL_SCENARIOS]
    for v, s, load, values in named or cells:
        found = validity.delayed_ack(values, variant=v, scenario=s, load=load)
        if found is not None:
            findings.append(found)
    percentiles = requested_percentiles(session, run)
    findings += validity.too_few_samples(named or cells, percentiles)
    steps: dict[tuple[str, str | None], int] = {}
    for f, _ in writer.facts:
        if f.latency_step_us:
            steps[(f.variant, f.load)] = max(steps.get((f.variant, f.load), 0), f.latency_step_us)
    findings += validity.coarse_latency(named or cells, percentiles, steps)
    rows = [f.row() for f in findings]
    run.validity = rows
    run.is_valid = validity.is_valid(rows)


def add_file(writer: RunWriter, run_file: RunFile, blob: Path, scratch: Path) -> None:
    path = open_blob_for_parsing(blob, run_file.filename, scratch)
    if run_file.format in PROFILE_FORMATS:
        add_profile(writer, run_file, path)
        return
    share = run_file.options.get("share")
    warmup_s = float(run_file.options.get("warmup_s", 0))
    try:
        parsed, result = ingest_file(path, format=run_file.format, options=options_for(run_file.options),
                                     warmup_s=warmup_s)
    except ParseError as exc:
        raise IngestFailed(run_file.filename, exc.reason, exc.line, exc.field) from None
    sampled = result.counts is not None and result.counts.samples > 0
    if not run_file.options.get("series_only") and sampled and result.interval_ms:
        for series in result.series:
            if series.metric == "throughput" and series.scenario is None and series.variant is None:
                found = validity.stall(series.t_ms, series.values, result.interval_ms, warmup_s=warmup_s,
                                       variant=run_file.variant, load=series.load.label)
                if found is not None and not found.ok:
                    writer.findings.append(found)
    if not run_file.options.get("series_only"):
        steps = _note_file(writer, run_file, parsed, warmup_s, result.counts) if sampled else {}
        for cell in result.cells:
            writer.add_cell(run_file.variant, cell, run_file.position, share, steps.get(cell.load.key))
        for cell in result.reported:
            writer.add_cell(getattr(cell, "variant", None) or run_file.variant, cell, run_file.position, share)
    if parsed.meta.get("time_base") == RELATIVE_TIME and share is None and run_file.options.get("started_ms") is None:
        shift, clocked = writer.lay_out(run_file.variant, result), False
    else:
        shift, clocked = clock_shift_ms(run_file.options, parsed.meta, result.interval_ms), True
    if sampled and result.counts is not None and result.interval_ms and clocked:
        writer.add_counts(run_file.variant, result, shift)
    for series in result.series:
        if shift:
            series.t_ms = [t + shift for t in series.t_ms]
        writer.add_series(getattr(series, "variant", None) or run_file.variant, series, share)


def add_profile(writer: RunWriter, run_file: RunFile, path: Path) -> None:
    """A CPU profile file (benchtrail.profiles): its stacks under its step's profile; a raw JFR recording is
    only kept (its stacks come with the benchtrail-profile file read from it)."""
    try:
        stacks = profile_ingest.read(run_file, path)
        if stacks is None:
            return
        scenario = run_file.options.get("scenario") or ALL_SCENARIOS
        load = load_from(run_file.options.get("load")) or LoadSpec()
        writer._note(run_file.variant, scenario, load)
        profile_ingest.add(writer.profiles, run_file, stacks, scenario, load, writer.files_by_position)
    except ParseError as exc:
        raise IngestFailed(run_file.filename, exc.reason, exc.line, exc.field) from None


def clock_shift_ms(options: dict[str, Any], meta: dict[str, Any], interval_ms: int | None) -> int:
    """How far to move the series of a file whose times count from its own start: to its upload's
    `started_ms`, rounded to whole intervals (so each interval still holds the same samples); without it,
    `RunWriter.lay_out` places the file. Not for a share's file: the shares of a run started together, so
    their series are combined interval by interval as they are (`RunWriter._union_series`)."""
    started = options.get("started_ms")
    if started is None or not interval_ms or options.get("share") is not None \
            or meta.get("time_base") != RELATIVE_TIME:
        return 0
    return (int(started) + interval_ms // 2) // interval_ms * interval_ms


@dataclass(slots=True)
class MeasuredFile:
    """A measured file's facts for the rate and error checks and the criteria: per load level its
    samples, errors and arrival rate (`facts`, with the load key), arrival rates per (variant,
    scenario, load key) and, for a hey CSV of a known request count, the requests it has no row for
    (hey writes only answered requests)."""

    facts: list[tuple[validity.FileFacts, str]]
    arrivals: dict[tuple[str, str, str], float]
    unanswered: dict[tuple[str, str, str], int]


def measured_file(parsed: Any, *, variant: str, scenario: str | None, fmt: str, warmup_s: float = 0.0,
                  counts: SampleCounts | None = None, share: tuple[int, int] | None = None) -> MeasuredFile:
    """`counts`: the file's summarised samples (`CellsResult.counts`); summarised here from
    `parsed.samples` when not given. `share`: (share, generators) of a file from one share of a run over
    several generators: its load level's request count is the share's (`split_count`)."""
    out = MeasuredFile([], {}, {})
    if counts is None:
        if parsed.samples is None or parsed.samples.height == 0:
            return out
        summariser = Summariser(warmup_s=warmup_s)
        summariser.add(parsed.samples)
        counts = summariser.finish()
    df = counts.table.filter(pl.col("measured") & ~pl.col("is_tx")).with_columns(
        pl.col("scenario", "load_key").cast(pl.String))
    if df.height == 0:
        return out
    aggs = [pl.col("n").sum().alias("n"), pl.col("errors").sum().alias("errors"),
            pl.col("first_start").min().alias("lo"), pl.col("last_start").max().alias("hi"),
            pl.col("scenario").n_unique().alias("scenarios")]

    def rate(n: int, lo: int, hi: int) -> float | None:
        return (n - 1) / ((hi - lo) / 1000.0) if n > 1 and hi > lo else None

    for row in df.group_by("scenario", "load_key").agg(aggs).iter_rows(named=True):
        r = rate(row["n"], row["lo"], row["hi"])
        if r is not None:
            out.arrivals[(variant, row["scenario"], row["load_key"])] = r
    for row in df.group_by("load_key").agg(*aggs, pl.col("latency_us").unique().alias("latencies")).iter_rows(named=True):
        load = parsed.loads.get(row["load_key"]) or LoadSpec()
        unanswered = 0
        if fmt == "hey-csv" and load.requests:
            asked = split_count(load.requests, *share) if share is not None else load.requests
            unanswered = max(0, asked - int(row["n"]))
            for key in ((variant, scenario or str(df["scenario"][0]), row["load_key"]),
                        (variant, ALL_SCENARIOS, row["load_key"])):
                out.unanswered[key] = unanswered
        r = rate(row["n"], row["lo"], row["hi"])
        if r is not None:
            out.arrivals[(variant, ALL_SCENARIOS, row["load_key"])] = r
        out.facts.append((validity.FileFacts(
            variant=variant, scenario=scenario, load=load.label, count=int(row["n"]), errors=int(row["errors"]),
            unanswered=unanswered, arrival_rate=r, scenarios=int(row["scenarios"]),
            dropped=int(parsed.meta.get("dropped_iterations") or 0), latency_step_us=validity.latency_step_us(row["latencies"]),
            share=share[0] if share is not None else None), row["load_key"]))
    return out


def _note_file(writer: RunWriter, run_file: RunFile, parsed: Any, warmup_s: float,
               counts: SampleCounts | None) -> dict[str, int]:
    """The measured file's facts and rates into `writer`; returns the step each load level's latencies
    were recorded in, by load key (those that show one)."""
    share = run_file.options.get("share")
    found = measured_file(parsed, variant=run_file.variant, scenario=run_file.options.get("scenario"),
                          fmt=run_file.format, warmup_s=warmup_s, counts=counts,
                          share=(int(share), writer.generators) if share is not None else None)
    writer.facts += found.facts
    started = run_file.options.get("started_ms")
    for f, load_key in found.facts:
        key = (run_file.variant, int(started) if started is not None else None, load_key)
        writer.step_requests[key] = writer.step_requests.get(key, 0) + f.count
    for key, r in found.arrivals.items():
        if share is not None:
            slot = (key, run_file.position)
            writer.share_arrivals[slot] = writer.share_arrivals.get(slot, 0.0) + r
        else:
            writer.arrivals.setdefault(key, []).append(r)
    for key, n in found.unanswered.items():
        writer.unanswered[key] = writer.unanswered.get(key, 0) + n
    return {load_key: f.latency_step_us for f, load_key in found.facts if f.latency_step_us}

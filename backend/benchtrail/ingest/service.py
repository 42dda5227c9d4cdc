"""Persisting parsed results: one run's cells, series and trails, in the caller's transaction.

`ingest_run` is what the `results.ingest` task calls. It either writes everything for the run or
raises; the task boundary rolls back and records the failure, so no half-ingested run remains.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from benchtrail import storage
from benchtrail.config import get_settings
from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import parse_file
from benchtrail.ingest.model import LoadSpec, ParseError
from benchtrail.ingest.options import options_for
from benchtrail.models import Blob, Cell, Environment, Load, Run, RunFile, Scenario, Series, Trail, Variant
from benchtrail.uploads.files import open_blob_for_parsing

CELL_COLUMNS = frozenset({
    "count", "errors", "throughput", "duration_s", "latency_mean", "latency_min", "latency_max",
    "latency_p50", "latency_p75", "latency_p90", "latency_p95", "latency_p99", "latency_p999",
    "cpu_pct", "cpu_s_per_1k", "rss_mb", "heap_mb", "achieved_rate", "score", "score_error",
})
INTEGER_COLUMNS = frozenset({"count", "errors"})
# The scenario name of a load level's all-scenarios cell (JMeter's TOTAL row, resources of the process).
ALL_SCENARIOS = "*"


class IngestFailed(Exception):
    def __init__(self, filename: str, reason: str, line: int | None = None, field: str | None = None):
        self.detail = {"file": filename, "line": line, "field": field, "reason": reason}
        where = [f"file '{filename}'"] + ([f"line {line}"] if line else []) + ([f"field '{field}'"] if field else [])
        super().__init__(f"{', '.join(where)}: {reason}")


def trail_hash(project_id: int, env_fingerprint: str, scenario: str, load_key: str, variant: str,
               mode: str) -> str:
    identity = [project_id, env_fingerprint, scenario, load_key, variant, mode]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()


@dataclass(slots=True)
class _PendingCell:
    variant: str
    scenario: str
    load: LoadSpec
    mode: str
    values: dict[str, Any]


class RunWriter:
    """Collects cells and series for one run, merging what several files say about the same cell
    (e.g. a JTL's latencies and a resource file's CPU for the same variant and load)."""

    def __init__(self, session: Session, run: Run, env_fingerprint: str) -> None:
        self.session = session
        self.run = run
        self.env_fingerprint = env_fingerprint
        self.cells: dict[tuple[str, str, str, str], _PendingCell] = {}
        self.series: list[tuple[str, Any]] = []
        self.variant_order: list[str] = []
        self.scenario_order: list[str] = []
        self.loads: dict[str, LoadSpec] = {}

    def add_cell(self, variant: str, cell: Any, source: str) -> None:
        scenario = cell.scenario if cell.scenario is not None else ALL_SCENARIOS
        load, mode = cell.load, (getattr(cell, "mode", None) or "")
        self._note(variant, scenario, load)
        values: dict[str, Any] = {"source": source}
        extra: dict[str, Any] = {}
        for key, value in (cell.stats or {}).items():
            if value is None:
                continue
            if key in CELL_COLUMNS:
                values[key] = int(value) if key in INTEGER_COLUMNS else float(value)
            else:
                extra[key] = value
        for attr, column in (("histogram", "histogram"), ("unit", "score_unit")):
            if getattr(cell, attr, None) is not None:
                values[column] = getattr(cell, attr)
        if getattr(cell, "params", None):
            values["params"] = dict(cell.params)
        if getattr(cell, "replicates", None):
            values["replicates"] = [float(x) for x in cell.replicates]
        values["is_transaction"] = bool(getattr(cell, "is_transaction", False))
        if extra:
            values["extra"] = extra
        key = (variant, scenario, load.key, mode)
        pending = self.cells.get(key)
        if pending is None:
            self.cells[key] = _PendingCell(variant, scenario, load, mode, values)
        else:
            for k, v in values.items():
                if k == "extra":
                    pending.values.setdefault("extra", {}).update(v)
                elif pending.values.get(k) is None:
                    pending.values[k] = v
            if "histogram" in values:
                pending.values["source"] = "samples"

    def add_series(self, variant: str, series: Any) -> None:
        self._note(variant, series.scenario, series.load)
        self.series.append((variant, series))

    def _note(self, variant: str, scenario: str | None, load: LoadSpec) -> None:
        if variant not in self.variant_order:
            self.variant_order.append(variant)
        if scenario is not None and scenario not in self.scenario_order:
            self.scenario_order.append(scenario)
        self.loads.setdefault(load.key, load)

    def write(self, reference: str) -> None:
        s, run = self.session, self.run
        variants = {}
        declared = run.meta.get("variants") or []
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
        trail_ids = self._trail_ids({(c.scenario, c.load.key, c.variant, c.mode) for c in self.cells.values()})
        rows = []
        for c in self.cells.values():
            rows.append(Cell(run_id=run.id, variant_id=variants[c.variant].id, scenario_id=scenarios[c.scenario].id,
                             load_id=loads[c.load.key].id, mode=c.mode,
                             trail_id=trail_ids[(c.scenario, c.load.key, c.variant, c.mode)],
                             **{"params": {}, "replicates": [], "extra": {}, **c.values}))
        s.add_all(rows)
        for variant, series in self.series:
            s.add(Series(run_id=run.id, variant_id=variants[variant].id,
                         scenario_id=scenarios[series.scenario].id if series.scenario is not None else None,
                         load_id=loads[series.load.key].id, metric=series.metric,
                         interval_ms=series.interval_ms, t_ms=[int(t) for t in series.t_ms],
                         values=[float(v) for v in series.values]))
        s.flush()

    def _trail_ids(self, keys: set[tuple[str, str, str, str]]) -> dict[tuple[str, str, str, str], int]:
        project_id = self.run.project_id
        by_hash = {trail_hash(project_id, self.env_fingerprint, *k): k for k in keys}
        if not by_hash:
            return {}
        self.session.execute(
            insert(Trail).values([
                dict(project_id=project_id, hash=h, env_fingerprint=self.env_fingerprint, scenario=k[0],
                     load_key=k[1], variant=k[2], mode=k[3]) for h, k in by_hash.items()
            ]).on_conflict_do_nothing(index_elements=["hash"]))
        rows = self.session.execute(select(Trail.id, Trail.hash).where(Trail.hash.in_(list(by_hash))))
        return {by_hash[h]: tid for tid, h in rows}


def _load_sort(spec: LoadSpec) -> tuple[str, float, int]:
    return (spec.kind, spec.value if spec.value is not None else -1, spec.requests or 0)


def ingest_run(session: Session, run_id: int) -> Run | None:
    """Parse every file of a run and write its cells; returns None when there is nothing to do."""
    run = session.scalar(select(Run).where(Run.id == run_id).with_for_update())
    if run is None or run.status != "ingesting":
        return None
    env = session.get(Environment, run.environment_id) if run.environment_id else None
    writer = RunWriter(session, run, env.fingerprint if env else "")
    files = session.execute(select(RunFile, Blob).join(Blob, Blob.id == RunFile.blob_id)
                            .where(RunFile.run_id == run.id).order_by(RunFile.position)).all()
    scratch = Path(tempfile.mkdtemp(prefix="ingest-", dir=_scratch()))
    try:
        for run_file, blob in files:
            add_file(writer, run_file, storage.blob_path(blob.sha256), scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    writer.write(reference=run.meta.get("reference") or "")
    run.status = "completed"
    run.finished_at = datetime.now(timezone.utc)
    return run


def add_file(writer: RunWriter, run_file: RunFile, blob: Path, scratch: Path) -> None:
    path = open_blob_for_parsing(blob, run_file.filename, scratch)
    try:
        parsed = parse_file(path, format=run_file.format, options=options_for(run_file.options))
        result = build_cells(parsed, warmup_s=float(run_file.options.get("warmup_s", 0)))
    except ParseError as exc:
        raise IngestFailed(run_file.filename, exc.reason, exc.line, exc.field) from None
    for cell in result.cells:
        writer.add_cell(run_file.variant, cell, "samples")
    for cell in result.reported:
        writer.add_cell(getattr(cell, "variant", None) or run_file.variant, cell, "reported")
    for series in result.series:
        writer.add_series(getattr(series, "variant", None) or run_file.variant, series)


def _scratch() -> Path:
    path = get_settings().data_dir / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path

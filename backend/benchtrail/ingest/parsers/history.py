"""Histories of many runs, brought from another tool (`benchtrail import`, POST /projects/{p}/imports):

- github-action-benchmark: its `data.js` on the gh-pages branch (`window.BENCHMARK_DATA = {...}`) or the
  same JSON (`benchmark-data-file-path`): `entries` maps each benchmark suite to its list of entries, one
  per CI run, each with its commit (id, timestamp, message, url), `date` (ms) and `benches`
  (`{name, value, unit, range?, extra?, biggerIsBetter?}`).
- Bencher: its reports as its API lists them (`GET /v0/projects/{project}/reports`, JSON array of
  reports, each `{start_time, branch, testbed, adapter, results: [iteration: [{measure, benchmarks:
  [{name, metric: {value, lower_value, upper_value}}]}]]}`), or an array of new-report bodies
  (`{start_time, branch, hash, testbed, results: [BMF JSON, one per iteration]}`, what `bencher run` sends).

Each entry (a CI run, a report) becomes a run of its own, backdated to the entry's time; `entries` lists
them in time order and the parse of one run reads entry `options.entry` (the raw file is stored once and
each run refers to it). A bench becomes a score cell (`microbench`): mode = the measure (github-action-
benchmark: `value`), unit as given, marked better higher when the tool says so (`biggerIsBetter`,
`customBiggerIsBetter`, benchmark.js `ops/sec`); the several iterations of a Bencher report are repetitions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..model import LoadSpec, ParsedFile, ParseError, ParseOptions, ReportedCell
from ..textio import read_text
from .bench_json import BMF_MEASURES, _list, _obj, bmf_cells, number
from .microbench import score_cell, split_params


@dataclass(slots=True)
class HistoryEntry:
    """One run of a history: where it is in the file and what the run records about it."""

    entry: int                          # the index `parse_*_entry` reads (options.entry)
    started_at: datetime
    commit: str | None = None
    branch: str | None = None
    environment: str | None = None      # Bencher's testbed
    tool: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    benchmarks: int = 0


# github-action-benchmark tools whose values are better higher (its `biggerIsBetter` per tool).
_GAB_HIGHER = {"benchmarkjs", "customBiggerIsBetter", "benchmarkluau"}


def _gab_root(path: Path) -> dict[str, Any]:
    text = read_text(path)
    body = text.lstrip()
    offset = len(text) - len(body)
    m = re.match(r"window\.BENCHMARK_DATA\s*=\s*", body)
    if m:
        body = body[m.end():].rstrip().rstrip(";")
        offset += m.end()
    try:
        root = json.loads(body)
    except json.JSONDecodeError as exc:
        line = text.count("\n", 0, offset + exc.pos) + 1
        raise ParseError(f"invalid JSON in the github-action-benchmark data: {exc.msg}", line=line) from None
    root = _obj(root, "file")
    if not isinstance(root.get("entries"), dict):
        raise ParseError("github-action-benchmark data has no 'entries' object", field="entries")
    return root


def _gab_entries(root: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """(suite, index in the suite, entry) of every entry, ordered by time (then suite, then position)."""
    out = []
    for suite, entries in root["entries"].items():
        for i, e in enumerate(_list(entries, f"entries.{suite}")):
            out.append((str(suite), i, _obj(e, f"entries.{suite}[{i}]")))
    out.sort(key=lambda t: (_gab_time(t[2], f"entries.{t[0]}[{t[1]}]"), t[0], t[1]))
    return out


def _gab_time(e: dict[str, Any], where: str) -> datetime:
    if "date" in e:
        return datetime.fromtimestamp(number(e["date"], f"{where}.date") / 1000.0, tz=timezone.utc)
    ts = (e.get("commit") or {}).get("timestamp")
    if isinstance(ts, str):
        try:
            at = datetime.fromisoformat(ts.replace("Z", "+00:00"))
            return at if at.tzinfo else at.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    raise ParseError(f"{where} has neither a 'date' (ms) nor a commit timestamp", field=f"{where}.date")


def gab_history(path: Path) -> list[HistoryEntry]:
    root = _gab_root(path)
    out = []
    for n, (suite, i, e) in enumerate(_gab_entries(root)):
        where = f"entries.{suite}[{i}]"
        commit = e.get("commit") or {}
        benches = _list(e.get("benches"), f"{where}.benches")
        labels = {"suite": suite}
        if isinstance(commit, dict) and commit.get("message"):
            labels["commit_message"] = str(commit["message"]).split("\n", 1)[0][:200]
        out.append(HistoryEntry(entry=n, started_at=_gab_time(e, where),
                                commit=str(commit.get("id")) if isinstance(commit, dict) and commit.get("id") else None,
                                tool=str(e.get("tool") or "") or None, labels=labels, benchmarks=len(benches)))
    if not out:
        raise ParseError("github-action-benchmark data with no entries", field="entries")
    return out


def parse_gab_entry(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    root = _gab_root(path)
    entries = _gab_entries(root)
    if options.entry is None:
        raise ParseError(f"a github-action-benchmark history of {len(entries)} run(s): import it "
                         "(benchtrail import, POST /api/v1/projects/{project}/imports), it makes one run per entry")
    if not 0 <= options.entry < len(entries):
        raise ParseError(f"entry {options.entry} is not in the history ({len(entries)} entries)", field="entry")
    return _gab_cells(*entries[options.entry], options)


def _gab_cells(suite: str, i: int, e: dict[str, Any], options: ParseOptions) -> ParsedFile:
    where = f"entries.{suite}[{i}]"
    tool = str(e.get("tool") or "")
    cells: list[ReportedCell] = []
    seen: set[tuple[str, str]] = set()
    taken: set[tuple[str | None, str | None, str]] = set()
    for j, b in enumerate(_list(e.get("benches"), f"{where}.benches")):
        bw = f"{where}.benches[{j}]"
        b = _obj(b, bw)
        name = str(b.get("name") or "")
        if not name:
            raise ParseError(f"{bw} has no name", field=f"{bw}.name")
        if (name, str(b.get("unit") or "")) in seen:
            continue   # github-action-benchmark keeps the first of two benches of one name too
        seen.add((name, str(b.get("unit") or "")))
        unit = str(b.get("unit") or "")
        bigger = b.get("biggerIsBetter")
        higher = bool(bigger) if isinstance(bigger, bool) else (tool in _GAB_HIGHER or unit.endswith(("/sec", "/s")))
        extra = {k: str(b[k]) for k in ("range", "extra") if b.get(k) not in (None, "")}
        extra["suite"] = suite
        params: dict[str, str] = {}
        mode = "value"
        load = options.load or LoadSpec()
        if tool == "go":
            # As `go test -bench` output reads (parsers.go_bench), so that the trails an import makes go on with
            # the Go files uploaded after it: the measure is the mode, `key=value` parts are parameters,
            # "N procs" (GOMAXPROCS) the load. Older versions of the action wrote one bench per benchmark whose
            # unit holds every measure ("ns/op\t 245982 B/op\t 1059 allocs/op"): its value is the first.
            unit = unit.split()[0] if unit.split() else unit
            name = name.removesuffix(f" - {unit}")
            first, *rest = name.split("/")
            kept, params = split_params(rest)
            name = "/".join([first, *kept])
            mode = unit
            procs = re.search(r"(\d+) procs", str(b.get("extra") or ""))
            if options.load is None:
                load = LoadSpec("threads", float(procs.group(1)) if procs else 1.0)
        value = b.get("value")
        if isinstance(value, str):
            # The action takes a custom tool's value as JSON gives it; real histories hold "31" as often as 31.
            try:
                value = float(value.strip())
            except ValueError:
                raise ParseError(f"{bw}.value: {value!r} is not a number", field=f"{bw}.value") from None
        cell = score_cell(name, params, mode, unit, score=number(value, f"{bw}.value"),
                          direction="higher" if higher else "lower", load=load, extra=extra, where=bw)
        if (cell.scenario, cell.mode, cell.load.key) in taken:
            continue   # the same measure twice (an old action's bench and its " - ns/op" twin): the first stays
        taken.add((cell.scenario, cell.mode, cell.load.key))
        cells.append(cell)
    if not cells:
        raise ParseError(f"{where} has no benches", field=f"{where}.benches")
    return ParsedFile(tool=tool or "github-action-benchmark", format="gab-history", reported=cells,
                      meta={"suite": suite})


# ------------------------------------------------------------------------------------------------ Bencher

def _bencher_root(path: Path) -> list[dict[str, Any]]:
    text = read_text(path)
    try:
        root = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", line=exc.lineno) from None
    reports = _list(root, "file")
    if not reports:
        raise ParseError("a Bencher export with no reports", field="file")
    out = [_obj(r, f"[{i}]") for i, r in enumerate(reports)]
    return sorted(out, key=lambda r: (_bencher_time(r, "report"), str(r.get("uuid", ""))))


def _bencher_time(r: dict[str, Any], where: str) -> datetime:
    value = r.get("start_time") or r.get("end_time") or r.get("created")
    if not isinstance(value, str):
        raise ParseError(f"{where} has no start_time", field=f"{where}.start_time")
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ParseError(f"{where}.start_time {value!r} is not an ISO 8601 time", field=f"{where}.start_time") from None
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _name(value: Any) -> str | None:
    if isinstance(value, dict):
        return str(value.get("name") or value.get("slug") or "") or None
    return str(value) if value else None


def _bencher_hash(r: dict[str, Any]) -> str | None:
    if isinstance(r.get("hash"), str):
        return r["hash"]
    branch = r.get("branch")
    if isinstance(branch, dict):
        for holder in (branch.get("head"), branch):
            version = holder.get("version") if isinstance(holder, dict) else None
            if isinstance(version, dict) and version.get("hash"):
                return str(version["hash"])
    return None


def bencher_history(path: Path) -> list[HistoryEntry]:
    out = []
    for n, r in enumerate(_bencher_root(path)):
        where = f"report {r.get('uuid') or n}"
        labels = {k: str(r[k]) for k in ("uuid", "adapter") if r.get(k)}
        out.append(HistoryEntry(entry=n, started_at=_bencher_time(r, where), commit=_bencher_hash(r),
                                branch=_name(r.get("branch")), environment=_name(r.get("testbed")),
                                tool="bencher", labels=labels, benchmarks=len(r.get("results") or [])))
    return out


def parse_bencher_entry(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    reports = _bencher_root(path)
    if options.entry is None:
        raise ParseError(f"a Bencher export of {len(reports)} report(s): import it (benchtrail import, "
                         "POST /api/v1/projects/{project}/imports), it makes one run per report")
    if not 0 <= options.entry < len(reports):
        raise ParseError(f"report {options.entry} is not in the export ({len(reports)} reports)", field="entry")
    return _bencher_cells(reports[options.entry], options.entry, options)


def _bencher_cells(r: dict[str, Any], index: int, options: ParseOptions) -> ParsedFile:
    where = f"report {r.get('uuid') or index}"
    iterations = _list(r.get("results"), f"{where}.results")
    if not iterations:
        raise ParseError(f"{where} has no results", field=f"{where}.results")
    # (benchmark, measure) -> values over the iterations, with the unit and bounds of the first
    per_key: dict[tuple[str, str], list[ReportedCell]] = {}
    for k, iteration in enumerate(iterations):
        iw = f"{where}.results[{k}]"
        for cell in _iteration_cells(iteration, iw, options):
            per_key.setdefault((cell.scenario or "", cell.mode or ""), []).append(cell)
    cells = []
    for (name, measure), parts in per_key.items():
        first = parts[0]
        if len(parts) == 1:
            cells.append(first)
            continue
        values = [p.stats["score"] for p in parts]
        unit, direction = first.unit or "", "higher" if (first.unit or "").endswith("↑") or \
            (first.unit or "").startswith("ops/") else "lower"
        cells.append(score_cell(name, {}, measure, unit.removesuffix(" ↑").removesuffix(" ↓"), replicates=values,
                                direction=direction, load=first.load,
                                extra={"bmf_measure": first.params.get("bmf_measure", measure)}))
    return ParsedFile(tool="bencher", format="bencher-reports", reported=cells,
                      meta={"adapter": r.get("adapter")})


def _iteration_cells(iteration: Any, where: str, options: ParseOptions) -> list[ReportedCell]:
    if isinstance(iteration, str):       # a new-report body: one BMF JSON string per iteration
        try:
            return bmf_cells(json.loads(iteration), where, options)
        except json.JSONDecodeError as exc:
            raise ParseError(f"{where}: invalid BMF JSON: {exc.msg}", field=where) from None
    if isinstance(iteration, dict):      # a BMF object given as it is
        return bmf_cells(iteration, where, options)
    cells = []
    for j, result in enumerate(_list(iteration, where)):   # a listed report: [{measure, benchmarks}]
        rw = f"{where}[{j}]"
        result = _obj(result, rw)
        measure = _obj(result.get("measure") or result.get("metric_kind") or {}, f"{rw}.measure")
        slug = str(measure.get("slug") or measure.get("name") or "")
        if not slug:
            raise ParseError(f"{rw}.measure has no slug", field=f"{rw}.measure")
        bmf: dict[str, Any] = {}
        for b, bench in enumerate(_list(result.get("benchmarks"), f"{rw}.benchmarks")):
            bench = _obj(bench, f"{rw}.benchmarks[{b}]")
            metric = _obj(bench.get("metric"), f"{rw}.benchmarks[{b}].metric")
            bmf[str(bench.get("name") or bench.get("slug"))] = {slug: metric}
        for cell in bmf_cells(bmf, rw, options) if bmf else []:
            if slug not in BMF_MEASURES and measure.get("units"):
                cell.unit = str(measure["units"])[:64]
            cells.append(cell)
    return cells


def read_history(path: Path, fmt: str, options: ParseOptions | None = None) -> list[tuple[HistoryEntry, ParsedFile]]:
    """Every run of a history with its cells, the file read once: what an import checks before it stores
    anything (each run is then ingested on its own, `parse_*_entry` reading its entry)."""
    options = options or ParseOptions()
    if fmt == "gab-history":
        entries = _gab_entries(_gab_root(path))
        return [(h, _gab_cells(*e, options)) for h, e in zip(gab_history(path), entries, strict=True)]
    if fmt == "bencher-reports":
        reports = _bencher_root(path)
        return [(h, _bencher_cells(r, n, options)) for n, (h, r) in enumerate(zip(bencher_history(path), reports,
                                                                                   strict=True))]
    raise ParseError(f"'{fmt}' is not a history format (gab-history, bencher-reports)", field="format")

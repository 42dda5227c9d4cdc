"""JSON result files of micro-benchmark tools (the cells are described in `microbench`):

- pytest-benchmark (`--benchmark-json`): one cell per benchmark, mode `mean`, seconds; the score is the
  mean time of one call as pytest-benchmark computed it; with `--benchmark-save-data` each round's time
  is a repetition; `params` become the scenario's parameters.
- Google Benchmark (`--benchmark_format=json` / `--benchmark_out`): per benchmark a `real_time` and a
  `cpu_time` cell in its own `time_unit`, and one per user counter (`bytes_per_second`,
  `items_per_second`: rates, better higher). With `--benchmark_repetitions` the iteration rows are
  repetitions and the score is the `mean` aggregate (the repetitions' mean); with
  `--benchmark_report_aggregates_only` only the aggregates exist: the score is the `mean` aggregate and
  median, stddev and cv go to params. `threads:N` in a name is the load (threads); `name:value` parts
  are parameters.
- Criterion (`target/criterion/<id>/new/estimates.json`): one cell, mode `time`, nanoseconds per
  iteration: the slope estimate where Criterion computed one (linear sampling), else the mean, as
  Criterion prints it; its 95% confidence bounds are kept, the error is their half-width.
  `sample.json`: the same point estimate computed from the samples (least-squares slope through the
  origin for linear sampling, the mean of time/iterations for flat), each sample a repetition.
  The scenario is the upload's `scenario`, else `criterion`.
- hyperfine (`--export-json`): one cell per command, mode `mean`, seconds; each run's time is a
  repetition; non-zero exit codes (with `-i`) are counted in params.
- Bencher Metric Format (BMF): `{benchmark: {measure: {value, lower_value?, upper_value?}}}`, one cell per
  benchmark and measure (mode = the measure). Bencher's built-in measures carry their units (`latency`
  ns, `throughput` ops/s better higher, `file-size` B, `build-time` s); any other measure is its own unit.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from ..model import LoadSpec, ParsedFile, ParseError, ParseOptions, ReportedCell
from ..textio import read_text
from .microbench import score_cell, split_params


def load_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None


def number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{where}: {value!r} is not a number", field=where)
    if not math.isfinite(float(value)):
        raise ParseError(f"{where}: {value!r} is not a finite number", field=where)
    return float(value)


def _obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ParseError(f"{where}: expected an object, got {type(value).__name__}", field=where)
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ParseError(f"{where}: expected an array, got {type(value).__name__}", field=where)
    return value


# ----------------------------------------------------------------------------------------------- pytest

def parse_pytest(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    root = _obj(load_json(path), "file")
    benches = _list(root.get("benchmarks"), "benchmarks")
    if not benches:
        raise ParseError("pytest-benchmark JSON with no benchmarks", field="benchmarks")
    cells = []
    for i, b in enumerate(benches):
        where = f"benchmarks[{i}]"
        b = _obj(b, where)
        stats = _obj(b.get("stats"), f"{where}.stats")
        name = str(b.get("name") or b.get("fullname") or "")
        if not name:
            raise ParseError(f"{where} has no name", field=f"{where}.name")
        params = {str(k): _text(v) for k, v in (b.get("params") or {}).items()}
        base = name.split("[", 1)[0] if params else name
        group = b.get("group")
        data = stats.get("data")
        replicates = [number(v, f"{where}.stats.data[{j}]") for j, v in enumerate(data)] if isinstance(data, list) else []
        extra = {k: repr(number(stats[k], f"{where}.stats.{k}")) for k in
                 ("min", "max", "median", "stddev", "iqr", "ops") if stats.get(k) is not None}
        extra.update({k: str(stats[k]) for k in ("rounds", "iterations") if stats.get(k) is not None})
        if group:
            extra["group"] = str(group)
        cell = score_cell(base, params, "mean", "s", score=number(stats.get("mean"), f"{where}.stats.mean"),
                          replicates=replicates if len(replicates) > 1 else (), load=options.load or LoadSpec(),
                          extra=extra, where=where)
        if len(replicates) > 1:
            cell.params["median"] = extra.get("median", cell.params["median"])
        cells.append(cell)
    meta = {"pytest_benchmark_version": root.get("version"), "datetime": root.get("datetime")}
    commit = root.get("commit_info") or {}
    if isinstance(commit, dict) and commit.get("id"):
        meta["commit"] = commit.get("id")
    return ParsedFile(tool="pytest-benchmark", format="pytest-benchmark", reported=cells, meta=meta)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# -------------------------------------------------------------------------------------- Google Benchmark

_GB_STANDARD = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
                "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
                "aggregate_name", "aggregate_unit", "error_occurred", "error_message", "label", "skipped",
                "skip_message", "complexity", "big_o", "rms"}
_GB_RATES = {"bytes_per_second": "B/s", "items_per_second": "items/s"}


def parse_google(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    root = _obj(load_json(path), "file")
    rows = _list(root.get("benchmarks"), "benchmarks")
    # run name -> {"iterations": [rows], "aggregates": {name: row}}
    groups: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    errors: list[str] = []
    for i, row in enumerate(rows):
        where = f"benchmarks[{i}]"
        row = _obj(row, where)
        name = str(row.get("run_name") or row.get("name") or "")
        if not name:
            raise ParseError(f"{where} has no name", field=f"{where}.name")
        if row.get("error_occurred") or row.get("skipped"):
            errors.append(f"{name}: {row.get('error_message') or row.get('skip_message') or 'skipped'}")
            continue
        if row.get("run_type") == "aggregate" and row.get("aggregate_name") in ("BigO", "RMS"):
            continue   # complexity fits, not measurements
        g = groups.get(name)
        if g is None:
            g = groups[name] = {"iterations": [], "aggregates": {}, "where": where}
            order.append(name)
        if row.get("run_type") == "aggregate":
            g["aggregates"][str(row.get("aggregate_name"))] = (row, where)
        else:
            g["iterations"].append((row, where))
    if not order:
        raise ParseError("Google Benchmark JSON with no benchmark results"
                         + (f" ({len(errors)} failed or skipped)" if errors else ""), field="benchmarks")
    cells: list[ReportedCell] = []
    for name in order:
        g = groups[name]
        iterations, aggregates = g["iterations"], g["aggregates"]
        first_row = (iterations[0] if iterations else next(iter(aggregates.values())))[0]
        parts = name.split("/")
        threads = 1.0
        kept_parts = []
        for part in parts[1:]:
            if m := re.fullmatch(r"threads:(\d+)", part):
                threads = float(m.group(1))
            else:
                kept_parts.append(part)
        kept, params = split_params(kept_parts, sep=":")
        base = "/".join([parts[0], *kept])
        load = options.load or LoadSpec("threads", float(first_row.get("threads") or threads))
        unit = str(first_row.get("time_unit") or "ns")
        measures: list[tuple[str, str, str | None]] = [("real_time", unit, None), ("cpu_time", unit, None)]
        counters = [k for k, v in first_row.items() if k not in _GB_STANDARD and isinstance(v, (int, float))
                    and not isinstance(v, bool)]
        for c in counters:
            measures.append((c, _GB_RATES.get(c, ""), "higher" if c in _GB_RATES else None))
        for key, m_unit, direction in measures:
            values = [number(r[key], f"{w}.{key}") for r, w in iterations if key in r]
            mean = aggregates.get("mean")
            extra: dict[str, str] = {"iterations": ", ".join(str(r.get("iterations")) for r, _ in iterations)} \
                if iterations else {}
            for agg in ("median", "stddev", "cv"):
                if agg in aggregates and key in aggregates[agg][0]:
                    extra[f"aggregate_{agg}"] = repr(number(aggregates[agg][0][key], f"{aggregates[agg][1]}.{key}"))
            if mean is not None and key in mean[0]:
                score = number(mean[0][key], f"{mean[1]}.{key}")
            elif values:
                score = None   # the repetitions' mean
            else:
                continue
            if len(values) > 1 and score is not None:
                # The mean aggregate is the repetitions' mean: keep both exact, refuse a file where they disagree.
                own = sum(values) / len(values)
                if not math.isclose(own, score, rel_tol=1e-9, abs_tol=1e-12):
                    extra["aggregate_mean"] = repr(score)
                    score = None
            cells.append(score_cell(base, params, key, m_unit, score=score, replicates=values, load=load,
                                    direction=direction, extra=extra, where=g["where"]))
    context = root.get("context") or {}
    meta = {k: context.get(k) for k in ("date", "host_name", "num_cpus", "mhz_per_cpu", "library_build_type",
                                        "library_version") if isinstance(context, dict) and k in context}
    warnings = [f"left out a benchmark that failed or was skipped: {e}" for e in errors]
    return ParsedFile(tool="google-benchmark", format="google-benchmark", reported=cells, meta=meta,
                      warnings=warnings)


# ---------------------------------------------------------------------------------------------- Criterion

def parse_criterion(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    root = _obj(load_json(path), "file")
    name = options.scenario or "criterion"
    load = options.load or LoadSpec()
    if "iters" in root and "times" in root:
        iters = [number(v, f"iters[{i}]") for i, v in enumerate(_list(root["iters"], "iters"))]
        times = [number(v, f"times[{i}]") for i, v in enumerate(_list(root["times"], "times"))]
        if len(iters) != len(times) or not iters:
            raise ParseError(f"sample.json has {len(iters)} iteration counts and {len(times)} times", field="times")
        if any(n <= 0 for n in iters):
            raise ParseError("sample.json has an iteration count of 0 or less", field="iters")
        mode = str(root.get("sampling_mode") or "Linear")
        per_iter = [t / n for t, n in zip(times, iters, strict=True)]
        if mode == "Linear":
            score = sum(n * t for n, t in zip(iters, times, strict=True)) / sum(n * n for n in iters)
            how = "slope"
        else:
            score = sum(per_iter) / len(per_iter)
            how = "mean"
        cell = score_cell(name, {}, "time", "ns", score=score, replicates=per_iter, load=load,
                          extra={"estimate": how, "sampling_mode": mode, "samples": str(len(iters))})
        return ParsedFile(tool="criterion", format="criterion-sample", reported=[cell])
    chosen = None
    for key in ("slope", "mean"):
        est = root.get(key)
        if isinstance(est, dict):
            chosen = key
            break
    if chosen is None:
        raise ParseError("estimates.json has neither a slope nor a mean estimate", field="mean")
    est = _obj(root[chosen], chosen)
    point = number(est.get("point_estimate"), f"{chosen}.point_estimate")
    ci = _obj(est.get("confidence_interval") or {}, f"{chosen}.confidence_interval")
    extra = {"estimate": chosen}
    error = None
    if "lower_bound" in ci and "upper_bound" in ci:
        lo = number(ci["lower_bound"], f"{chosen}.confidence_interval.lower_bound")
        hi = number(ci["upper_bound"], f"{chosen}.confidence_interval.upper_bound")
        extra.update(lower_bound=repr(lo), upper_bound=repr(hi),
                     confidence_level=repr(ci.get("confidence_level")))
        error = (hi - lo) / 2
    for key in ("mean", "median", "std_dev", "median_abs_dev"):
        if key != chosen and isinstance(root.get(key), dict) and "point_estimate" in root[key]:
            extra[key] = repr(number(root[key]["point_estimate"], f"{key}.point_estimate"))
    cell = score_cell(name, {}, "time", "ns", score=point, error=error, load=load, extra=extra)
    return ParsedFile(tool="criterion", format="criterion-estimates", reported=[cell])


# ---------------------------------------------------------------------------------------------- hyperfine

def parse_hyperfine(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    root = _obj(load_json(path), "file")
    results = _list(root.get("results"), "results")
    if not results:
        raise ParseError("hyperfine JSON with no results", field="results")
    cells = []
    for i, r in enumerate(results):
        where = f"results[{i}]"
        r = _obj(r, where)
        command = str(r.get("command") or "")
        if not command:
            raise ParseError(f"{where} has no command", field=f"{where}.command")
        times = r.get("times")
        values = [number(v, f"{where}.times[{j}]") for j, v in enumerate(times)] if isinstance(times, list) else []
        extra = {k: repr(number(r[k], f"{where}.{k}")) for k in ("stddev", "median", "min", "max", "user", "system")
                 if r.get(k) is not None}
        codes = r.get("exit_codes")
        if isinstance(codes, list):
            failed = sum(1 for c in codes if c not in (0, None))
            if failed:
                extra["failed_runs"] = str(failed)
        params = {str(k): _text(v) for k, v in (r.get("parameters") or {}).items()}
        cells.append(score_cell(command, {}, "mean", "s", score=number(r.get("mean"), f"{where}.mean"),
                                replicates=values, load=options.load or LoadSpec(),
                                extra={**extra, **{f"parameter {k}": v for k, v in params.items()}}, where=where))
    return ParsedFile(tool="hyperfine", format="hyperfine", reported=cells)


# -------------------------------------------------------------------------------------------------- BMF

# Bencher's built-in measures: (unit, direction).
BMF_MEASURES: dict[str, tuple[str, str]] = {
    "latency": ("ns", "lower"), "throughput": ("ops/s", "higher"), "file-size": ("B", "lower"),
    "build-time": ("s", "lower"), "instructions": ("instructions", "lower"), "cycles": ("cycles", "lower"),
}


def bmf_cells(root: Any, where: str, options: ParseOptions) -> list[ReportedCell]:
    root = _obj(root, where)
    if not root:
        raise ParseError(f"{where}: a BMF document names at least one benchmark", field=where)
    cells = []
    for bench, measures in root.items():
        bw = f"{where}.{bench}" if where != "file" else str(bench)
        measures = _obj(measures, bw)
        if not measures:
            raise ParseError(f"{bw}: a BMF benchmark has at least one measure", field=bw)
        for measure, metric in measures.items():
            mw = f"{bw}.{measure}"
            metric = _obj(metric, mw)
            if "value" not in metric:
                raise ParseError(f"{mw}: a BMF metric has a 'value'", field=f"{mw}.value")
            value = number(metric["value"], f"{mw}.value")
            unit, direction = BMF_MEASURES.get(str(measure), (str(measure), "lower"))
            extra = {"bmf_measure": str(measure)}
            lo = metric.get("lower_value")
            hi = metric.get("upper_value")
            error = None
            if lo is not None:
                extra["lower_value"] = repr(number(lo, f"{mw}.lower_value"))
            if hi is not None:
                extra["upper_value"] = repr(number(hi, f"{mw}.upper_value"))
            if lo is not None and hi is not None:
                error = (float(hi) - float(lo)) / 2
            cells.append(score_cell(str(bench), {}, str(measure), unit, score=value, error=error,
                                    direction=direction, load=options.load or LoadSpec(), extra=extra, where=mw))
    return cells


def parse_bmf(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    return ParsedFile(tool="bencher", format="bmf", reported=bmf_cells(load_json(path), "file",
                                                                         options or ParseOptions()))

"""JMH JSON (`-rf json`): an array of results, one per benchmark × mode × params (× threads)."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

from ..model import LoadSpec, ParsedFile, ParseError, ParseOptions, ReportedCell
from ..textio import read_text
from .jmh_common import normalise_secondary, percentile_stat, scenario_of, time_unit_ms

_SPECIAL = {"NaN": math.nan, "+INF": math.inf, "-INF": -math.inf, "Infinity": math.inf,
            "-Infinity": -math.inf}


def num(value: object, where: str) -> float:
    """JMH writes NaN/±∞ as the JSON strings "NaN", "+INF", "-INF"."""
    if isinstance(value, bool):
        raise ParseError(f"{where}: {value!r} is not a number", field=where)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in _SPECIAL:
        return _SPECIAL[value]
    raise ParseError(f"{where}: {value!r} is not a number", field=where)


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", line=exc.lineno) from exc
    if not isinstance(data, list) or not data:
        raise ParseError("a JMH JSON result is a non-empty array of benchmark results")
    cells: list[ReportedCell] = []
    warnings: list[str] = []
    versions: set[str] = set()
    for i, result in enumerate(data):
        where = f"[{i}]"
        if not isinstance(result, dict) or "benchmark" not in result or "primaryMetric" not in result:
            raise ParseError(f"{where} lacks 'benchmark' or 'primaryMetric'", field=f"{where}")
        if "jmhVersion" in result:
            versions.add(str(result["jmhVersion"]))
        bench = str(result["benchmark"])
        mode = str(result.get("mode", ""))
        threads = result.get("threads")
        load = options.load or (LoadSpec("threads", float(threads)) if threads else LoadSpec())
        declared = {str(k): str(v) for k, v in (result.get("params") or {}).items()}
        params = {**declared, **{k: str(result[k]) for k in ("forks", "warmupIterations",
                                 "measurementIterations", "jdkVersion") if k in result}}
        found = [_cell(scenario_of(bench, declared), result["primaryMetric"], mode, load, params,
                       f"{where}.primaryMetric")]
        for name, metric in (result.get("secondaryMetrics") or {}).items():
            found.append(_cell(scenario_of(bench, declared, normalise_secondary(name)), metric, mode, load,
                               dict(params), f"{where}.secondaryMetrics.{name}"))
        for cell in found:
            # A profiler's placeholder result (-prof perfasm's "asm": score "NaN", unit "---") measures nothing.
            if math.isnan(cell.stats["score"]):
                warnings.append(f"{cell.scenario}: no score (NaN), left out")
            else:
                cells.append(cell)
    if not cells:
        raise ParseError("no JMH result has a score (every score is NaN)")
    return ParsedFile(tool="jmh", format="jmh-json", reported=cells,
                      meta={"jmh_version": ", ".join(sorted(versions)) or None}, warnings=warnings)


def _cell(scenario: str, metric: dict, mode: str, load: LoadSpec, params: dict[str, str],
          where: str) -> ReportedCell:
    if not isinstance(metric, dict) or "score" not in metric:
        raise ParseError(f"{where} has no score", field=where)
    unit = str(metric.get("scoreUnit", "")) or None
    stats = {"score": num(metric["score"], f"{where}.score")}
    if "scoreError" in metric:
        err = num(metric["scoreError"], f"{where}.scoreError")
        if not math.isnan(err):  # NaN with <= 2 iterations: no error bar, not an error of 0
            stats["score_error"] = err
    replicates = [num(v, f"{where}.rawData") for fork in metric.get("rawData") or []
                  for v in fork]
    ms = time_unit_ms(unit)
    if mode == "sample" and ms is not None:
        for key, value in (metric.get("scorePercentiles") or {}).items():
            # Decimal keeps "99.99" -> "0.9999" exact (float division gives 0.99989999…).
            frac = format((Decimal(key) / 100).normalize(), "f")
            stat, in_catalog = percentile_stat(frac)
            v = num(value, f"{where}.scorePercentiles.{key}") * ms
            if in_catalog:
                stats[stat] = v
            else:
                params[f"{stat}_ms"] = repr(v)
    return ReportedCell(scenario=scenario, load=load, stats=stats, unit=unit, mode=mode,
                        params=params, replicates=replicates)

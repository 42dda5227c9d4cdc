"""Benchtrail JSON v1: our documented format for anything no other parser reads, including the
summary-only tables projects publish (docs/benchtrail-json/README.md, schema-v1.json)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl

from ...metrics import CATALOG
from ..model import SAMPLE_SCHEMA, LoadSpec, ParsedFile, ParseError, ParseOptions, ReportedCell, \
    SeriesData
from ..textio import read_text

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schemas" / "benchtrail-v1.json"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return _FastItems(schema)


# jsonschema checks an array's items one by one through its whole machinery: about 20 µs each, so the
# samples of a file (parallel arrays, one entry per request) cost more to check than to read. An array
# whose item schema is a plain type (with `minimum`, or a fixed-length tuple of such) is first checked in
# one pass by a predicate at least as strict as the schema; only when an item fails it is the array checked
# by jsonschema itself, which then reports exactly the errors it always did.
_TYPES: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float), "boolean": (bool,), "string": (str,)}
_ANNOTATIONS = {"description", "title"}


def _predicate(schema: object) -> Callable[[object], bool] | None:
    """A check of one item, or None when the schema is not one this fast path knows."""
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        return None
    keys = set(schema) - _ANNOTATIONS
    kind = schema["type"]
    if kind in _TYPES and keys <= {"type", "minimum"}:
        types, low = _TYPES[kind], schema.get("minimum")
        if low is None:
            return lambda x: type(x) in types
        return lambda x: type(x) in types and x >= low
    if kind == "array" and keys <= {"type", "prefixItems", "minItems", "maxItems"}:
        parts = [_predicate(s) for s in schema.get("prefixItems", [])]
        if any(p is None for p in parts):
            return None
        lo, hi = schema.get("minItems", 0), schema.get("maxItems", math.inf)
        checks = tuple(parts)   # items past the prefix are unconstrained (no `items` here)
        return lambda x: (type(x) is list and lo <= len(x) <= hi
                          and all(check(v) for check, v in zip(checks, x)))  # type: ignore[misc]
    return None


def _items(validator: Any, items: object, instance: object,
           schema: dict[str, Any]) -> Iterator[jsonschema.ValidationError]:
    check = _predicate(items)
    if check is not None and type(instance) is list and not schema.get("prefixItems") and all(map(check, instance)):
        return
    yield from _ITEMS(validator, items, instance, schema)


_ITEMS = jsonschema.Draft202012Validator.VALIDATORS["items"]
_FastItems = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"items": _items})


def _path(parts: object) -> str:
    out = "$"
    for p in parts:  # type: ignore[attr-defined]
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    text = read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg}", line=exc.lineno) from exc
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = _path(e.absolute_path)
        raise ParseError(f"{where}: {e.message}", field=where)
    reported: list[ReportedCell] = []
    series: list[SeriesData] = []
    sample_parts: list[pl.DataFrame] = []
    loads: dict[str, LoadSpec] = {}
    variants = doc["variants"]
    for vi, variant in enumerate(variants):
        vname = variant.get("name")
        for si, scenario in enumerate(variant["scenarios"]):
            sname = scenario["name"]
            for li, m in enumerate(scenario["loads"]):
                where = f"$.variants[{vi}].scenarios[{si}].loads[{li}]"
                load = _load(m["load"])
                process = m.get("process")
                if process is not None and (sname is not None or "samples" in m):
                    raise ParseError("a process's measurement needs a null (all-scenarios) scenario and no "
                                     "samples", field=f"{where}.process")
                for key in m.get("stats", {}):
                    if key not in CATALOG:
                        raise ParseError(f"{where}.stats: unknown metric '{key}'; known: "
                                         f"{', '.join(sorted(CATALOG))}", field=f"{where}.stats.{key}")
                if "stats" in m:
                    reported.append(ReportedCell(
                        scenario=sname, load=load, stats={k: float(v) for k, v in m["stats"].items()},
                        unit=m.get("unit"), mode=m.get("mode"), params=dict(m.get("params", {})),
                        replicates=[float(x) for x in m.get("replicates", [])], variant=vname,
                        process=process))
                for ri, s in enumerate(m.get("series", [])):
                    if s["metric"] not in CATALOG:
                        raise ParseError(f"unknown metric '{s['metric']}'",
                                         field=f"{where}.series[{ri}].metric")
                    pts = sorted(s["points"])
                    series.append(SeriesData(metric=s["metric"], scenario=sname, load=load,
                                             t_ms=[int(p[0]) for p in pts],
                                             values=[float(p[1]) for p in pts],
                                             interval_ms=s.get("interval_ms"), variant=vname,
                                             process=process))
                if "samples" in m:
                    sample_parts.append(_samples(m["samples"], sname, load, where, len(variants)))
                    loads[load.key] = load
    samples = pl.concat(sample_parts) if sample_parts else None
    return ParsedFile(tool=str(doc.get("tool") or "benchtrail"), format="benchtrail-json",
                      samples=samples, loads=loads, reported=reported, series=series,
                      meta={"version": doc["version"], **dict(doc.get("meta", {})),
                            "variants": [v.get("name") for v in variants]})


def _samples(s: dict, scenario: str | None, load: LoadSpec, where: str,
             n_variants: int) -> pl.DataFrame:
    if n_variants > 1:
        raise ParseError("raw samples are only accepted in a file with a single variant "
                         "(upload one file per variant)", field=f"{where}.samples")
    if scenario is None:
        raise ParseError("raw samples need a named scenario", field=f"{where}.samples")
    n = len(s["start_ms"])
    for key in ("latency_ms", "success", "bytes"):
        if key in s and len(s[key]) != n:
            raise ParseError(f"'{key}' has {len(s[key])} entries, 'start_ms' has {n}",
                             field=f"{where}.samples.{key}")
    return pl.DataFrame({
        "scenario": [scenario] * n, "load_key": [load.key] * n,
        "start_ms": s["start_ms"], "latency_us": [round(x * 1000) for x in s["latency_ms"]],
        "success": s.get("success", [True] * n), "bytes": s.get("bytes", [0] * n),
        "is_transaction": [False] * n,
    }).cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]


def _load(d: dict) -> LoadSpec:
    def f(v: object) -> float | None:
        return None if v is None else float(v)  # type: ignore[arg-type]
    return LoadSpec(kind=d["kind"], value=f(d.get("value")), requests=d.get("requests"),
                    duration_s=f(d.get("duration_s")))

"""The names a result file gives (scenarios, load levels, variants, processes, JMH modes, score units and
parameters) go into columns of a set width, as text PostgreSQL takes: without a NUL, without an unpaired
surrogate (no UTF-8 for it), within the width. A name that does not fit refuses its file with a `ParseError`
naming the field, where the file is read: at the upload's check when that reads the file whole (or its first
rows), else at its ingest; never a database error on the run's write. (The upload fuzz test found both: a name
with a NUL byte and one longer than its column, each accepted and then failing its ingest on an internal error.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl

from benchtrail.models import Cell, Load, Scenario, Variant

from .model import ParsedFile, ParseError


def _width(table: Any, column: str) -> int:
    return int(table.__table__.c[column].type.length)


# Each name's column width, as the tables declare it (a parameter goes into JSON: no width).
WIDTH: dict[str, int | None] = {
    "scenario": _width(Scenario, "name"), "load": min(_width(Load, "key"), _width(Load, "label")),
    "variant": _width(Variant, "name"), "process": _width(Cell, "process"), "mode": _width(Cell, "mode"),
    "unit": _width(Cell, "score_unit"), "parameter": None}


def check_names(parsed: ParsedFile) -> None:
    for field, value in _names(parsed):
        _check(field, value)


def check_batch(batch: pl.DataFrame) -> None:
    """The scenario names of a batch of samples (the upload's check of a streamed file's first rows; its load keys
    are known once the whole file is read)."""
    for value in _column(batch, "scenario"):
        _check("scenario", value)


def _check(field: str, value: str) -> None:
    problem = _problem(value, WIDTH[field])
    if problem is not None:
        shown = value if len(value) <= 60 else value[:60] + "…"
        raise ParseError(f"{field} {shown!r} {problem}", field=field)


def _column(table: pl.DataFrame, column: str) -> list[str]:
    return [v for v in table.get_column(column).cast(pl.String).unique().to_list() if v is not None]


def _problem(value: str, width: int | None) -> str | None:
    for index, ch in enumerate(value):
        if ch == "\x00":
            return f"contains a NUL byte at character {index}"
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return f"contains an unpaired UTF-16 surrogate (U+{ord(ch):04X}) at character {index}"
    if width is not None and len(value) > width:
        return f"is {len(value)} characters long; at most {width} are kept"
    return None


def _names(parsed: ParsedFile) -> Iterator[tuple[str, str]]:
    tables = [t for t in (parsed.samples, parsed.counts.table if parsed.counts is not None else None)
              if t is not None and t.height]
    for table in tables:
        for field, column in (("scenario", "scenario"), ("load", "load_key")):
            if column in table.columns:
                yield from ((field, v) for v in _column(table, column))
    for key, spec in parsed.loads.items():
        yield from (("load", key), ("load", spec.label))
    for cell in parsed.reported:
        yield from ((f, v) for f, v in (("scenario", cell.scenario), ("load", cell.load.key), ("load", cell.load.label),
                                        ("variant", cell.variant), ("process", cell.process), ("mode", cell.mode),
                                        ("unit", cell.unit)) if v is not None)
        for name, value in cell.params.items():
            yield ("parameter", str(name))
            yield ("parameter", str(value))
    for series in parsed.series:
        yield from ((f, v) for f, v in (("scenario", series.scenario), ("variant", series.variant),
                                        ("process", series.process)) if v is not None)

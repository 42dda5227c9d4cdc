"""A metric's value in a cell, however the catalog says it is had (`benchtrail.metrics`): a column of the cell's
own, the error rate from its errors and requests, or a percentile computed from the HDR histogram every cell of
samples keeps. Works on a `Cell` row and on a mapping of a cell's values alike (what ingest judges criteria on,
the run document's cells)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from benchtrail import metrics
from benchtrail.ingest.histogram import percentile_ms


def _getter(cell: Any) -> Any:
    return cell.get if isinstance(cell, Mapping) else (lambda key: getattr(cell, key, None))


def value_of(cell: Any, name: str) -> float | None:
    get = _getter(cell)
    metric = metrics.CATALOG.get(name)
    if name == "error_rate":
        errors, count = get("errors"), get("count")
        return 100.0 * errors / count if isinstance(errors, (int, float)) and count else None
    if metric is None or metric.stored:
        value = get(name)
    elif metric.percentile is not None and get("histogram"):
        value = percentile_ms(get("histogram"), metric.percentile)
    else:
        value = None
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def derived(name: str) -> bool:
    """A catalog metric with no column of its own, read from the cell's histogram (`value_of`)."""
    metric = metrics.CATALOG.get(name)
    return metric is not None and not metric.stored and metric.percentile is not None

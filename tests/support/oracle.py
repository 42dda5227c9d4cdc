"""Independent computations on raw JTL files (csv module + numpy), used as test oracles.

Percentile definition shared with the code under test: nearest rank, i.e. numpy's
`method="inverted_cdf"` (smallest value with at least ceil(p·n) samples at or below it). The code
reads it from an HdrHistogram with 3 significant digits, so it must be within 0.1% of this value.
"""

from __future__ import annotations

import csv
import math
import re
from fractions import Fraction
from collections import defaultdict
from pathlib import Path

import numpy as np

TX_PREFIX = "Number of samples in transaction"


def nearest_rank(values, p: float) -> float:
    """Value of rank ceil(p·n/100) in exact arithmetic. numpy's `inverted_cdf` is the same
    definition, but computes p·n in floating point (0.999 · 50000 = 49950.000000000004 -> rank
    49951), so it can be one rank off at the tail."""
    ordered = np.sort(np.asarray(values))
    rank = math.ceil(Fraction(str(p)) * len(ordered) / 100)
    return float(ordered[max(rank, 1) - 1])


def read_jtl(path: Path, delimiter: str = ",") -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh, delimiter=delimiter))


def thread_group(thread_name: str) -> str:
    m = re.match(r"^(.*?)\s*(\d+)-(\d+)$", thread_name)
    return m.group(1) if m else thread_name


def summarise(rows: list[dict[str, str]]) -> dict[str, float]:
    elapsed = np.array([int(r["elapsed"]) for r in rows], dtype=np.int64)
    start = np.array([int(r["timeStamp"]) for r in rows], dtype=np.int64)
    ok = [r.get("success", "true").lower() == "true" for r in rows]
    duration_s = (np.max(start + elapsed) - np.min(start)) / 1000.0
    return {
        "count": len(rows),
        "errors": sum(1 for x in ok if not x),
        "latency_mean": float(elapsed.sum()) / len(rows),
        "latency_min": float(elapsed.min()),
        "latency_max": float(elapsed.max()),
        "latency_p50": nearest_rank(elapsed, 50),
        "latency_p75": nearest_rank(elapsed, 75),
        "latency_p99": nearest_rank(elapsed, 99),
        "duration_s": float(duration_s),
        "throughput": len(rows) / duration_s if duration_s else float("nan"),
    }


def by_label(rows: list[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        out[r["label"]].append(r)
    return out


def is_tx(row: dict[str, str]) -> bool:
    return (row.get("responseMessage") or "").startswith(TX_PREFIX)


def assert_matches(stats: dict[str, float], expected: dict[str, float]) -> None:
    assert stats["count"] == expected["count"]
    assert stats["errors"] == expected["errors"]
    assert stats["latency_mean"] == pytest_approx(expected["latency_mean"], rel=1e-12)
    assert stats["latency_min"] == expected["latency_min"]
    assert stats["latency_max"] == expected["latency_max"]
    for p in ("latency_p50", "latency_p75", "latency_p99"):
        assert abs(stats[p] - expected[p]) <= expected[p] * 0.001 + 1e-9, (p, stats[p], expected[p])
    assert stats["duration_s"] == pytest_approx(expected["duration_s"], rel=1e-12)
    if expected["duration_s"]:
        assert stats["throughput"] == pytest_approx(expected["throughput"], rel=1e-12)


def pytest_approx(value: float, rel: float):
    import pytest
    return pytest.approx(value, rel=rel)

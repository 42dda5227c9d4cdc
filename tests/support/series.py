"""Throughput over time computed here from raw samples, independently of ingest: per epoch-aligned
interval, the requests that started in it over the part of it during which the load ran (any file,
from its first start to its last end); an interval the load covered for under a tenth of it (or of the
whole load, if that is shorter) has no point."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def throughput(files: Sequence[tuple[np.ndarray, np.ndarray]], interval_ms: int) -> tuple[list[int], list[float]]:
    """`files`: (start ms, end ms) arrays of each file's samples. Returns (interval starts, req/s)."""
    starts = np.concatenate([np.asarray(s, dtype=float) for s, _ in files])
    spans = sorted((float(np.min(s)), float(np.max(e))) for s, e in files)
    lo, hi = spans[0][0], max(e for _, e in spans)
    grid = np.arange(lo - lo % interval_ms, hi + 1, interval_ms)
    union: list[list[float]] = []
    for s, e in spans:
        if union and s <= union[-1][1]:
            union[-1][1] = max(union[-1][1], e)
        else:
            union.append([s, e])
    whole = sum(e - s for s, e in union)
    ran = np.array([sum(max(0.0, min(t + interval_ms, e) - max(t, s)) for s, e in union) for t in grid])
    ts, values = [], []
    for t, covered in zip(grid, ran):
        n = int(((starts >= t) & (starts < t + interval_ms)).sum())
        if n and covered > 0 and covered >= 0.1 * min(interval_ms, whole):
            ts.append(int(t))
            values.append(n * 1000.0 / covered)
    return ts, values

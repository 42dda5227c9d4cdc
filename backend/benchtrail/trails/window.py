"""Which points of a long trail a reader gets: a window of the trail in version order (the newest
`limit` points, or those before a given run), thinned for a chart to at most `max_points` points while
keeping what a reader must see — every change point and alerted run, and each bucket's lowest and
highest value, so no spike or dip disappears.

Pure functions over positions in the version-ordered trail: no queries here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# A page of a trail when none is asked for (the History page asks for its own window and thinning).
DEFAULT_LIMIT = 200
MAX_LIMIT = 20000


@dataclass(frozen=True, slots=True)
class Window:
    start: int                 # index of the window's first point in the whole trail
    stop: int                  # one past its last point
    kept: list[int]            # indices (into the whole trail) returned, ascending
    total: int                 # points in the whole trail

    @property
    def downsampled(self) -> bool:
        return len(self.kept) < self.stop - self.start


def window(slugs: Sequence[str], values: Sequence[float], *, before: str | None, limit: int,
           max_points: int | None, keep: Iterable[int] = ()) -> Window:
    """`before`: a run's slug; the window ends just before it (None: at the newest point).
    Raises ValueError when `before` is not a run of this trail."""
    total = len(slugs)
    stop = slugs.index(before) if before is not None else total
    start = max(0, stop - limit)
    indices = list(range(start, stop))
    if max_points is not None and len(indices) > max_points:
        indices = _thin(indices, values, max_points, {k for k in keep if start <= k < stop})
    return Window(start, stop, indices, total)


def _thin(indices: list[int], values: Sequence[float], max_points: int, keep: set[int]) -> list[int]:
    """Min and max of each of max_points/2 equal buckets (NaN, i.e. invalid, points count as
    extremes so they stay visible), plus the first, the last and every index in `keep`."""
    buckets = max(1, (max_points - len(keep) - 2) // 2)
    size = math.ceil(len(indices) / buckets)
    out = set(keep) | {indices[0], indices[-1]}
    for b in range(0, len(indices), size):
        chunk = indices[b:b + size]
        nans = [i for i in chunk if not math.isfinite(values[i])]
        finite = [i for i in chunk if math.isfinite(values[i])]
        out.update(nans[:2])
        if finite:
            out.add(min(finite, key=lambda i: values[i]))
            out.add(max(finite, key=lambda i: values[i]))
    return sorted(out)

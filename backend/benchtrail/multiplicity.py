"""Verdicts over many cells at once: each cell's p-value adjusted for every cell compared with it.

One unchanged cell in 40 lies on the worse side of zero at 95% by chance, so among the 30 cells of a
comparison (the Easegress shape) one or two "worse" verdicts are expected when nothing changed. The
Benjamini-Hochberg adjustment holds the false discovery rate, the expected share of chance findings
among the cells flagged, at `FALSE_DISCOVERY_RATE`: a cell is significant over the whole comparison
when its adjusted p is below it."""

from __future__ import annotations

import math
from collections.abc import Sequence

FALSE_DISCOVERY_RATE = 0.05


def adjusted_p_values(p_values: Sequence[float | None]) -> list[float | None]:
    """Each p-value adjusted (Benjamini-Hochberg) over every finite one given; None stays None (a cell
    without a p-value is not counted, and keeps its own verdict)."""
    from scipy.stats import false_discovery_control   # here: the CLI imports this module for the rate alone

    known = [i for i, p in enumerate(p_values) if p is not None and math.isfinite(p)]
    out: list[float | None] = [None] * len(p_values)
    if known:
        for i, p in zip(known, false_discovery_control([p_values[i] for i in known], method="bh")):
            out[i] = float(p)
    return out


def not_over_cells(ci_low: float | None, ci_high: float | None, p_adjusted: float | None, cells: int) -> str:
    """What to add to a verdict read among `cells` answered together: ", not significant over N cells
    (adjusted p X)" when its own interval excludes 0 but its adjusted p is not below the false discovery
    rate; else nothing (the dashboard words it the same way, `verdictText`)."""
    if ci_low is None or ci_high is None or not (ci_low > 0 or ci_high < 0):
        return ""
    if p_adjusted is None or p_adjusted < FALSE_DISCOVERY_RATE:
        return ""
    return f", not significant over {cells} cell{'' if cells == 1 else 's'} (adjusted p {p_adjusted:.2g})"

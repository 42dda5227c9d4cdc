"""Statistics the tests compute on their own, from the definitions, to check the product's."""

from __future__ import annotations


def benjamini_hochberg(ps: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values: p_(i) · m / i over the sorted p-values, then the running
    minimum from the largest (capped at 1)."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, ps[i] * m / rank)
        out[i] = running
    return out

"""`benchtrail compare --fail-on-worse` holds the false discovery rate over every compared cell: the
adjusted p-values are Benjamini-Hochberg's, computed here by hand from the definition."""

from __future__ import annotations

import pytest

from benchtrail.cli.main import adjusted_p_values, failing_rows


def row(p: float | None, worse: bool) -> dict:
    return {"result": {"p_value": p, "worse": worse}}


def by_hand(ps: list[float]) -> list[float]:
    """Benjamini-Hochberg: p_(i) · m / i over the sorted p-values, then the running minimum from the largest."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, ps[i] * m / rank)
        out[i] = running
    return out


def test_one_marginal_cell_among_many_does_not_fail_the_gate() -> None:
    # Six cells: one "worse" at p = 0.03 (it would fail an unadjusted gate), the others unchanged.
    rows = [row(0.03, True), row(0.41, False), row(0.62, False), row(0.2, False), row(0.9, False), row(0.77, False)]
    adjusted = adjusted_p_values(rows)
    assert adjusted == pytest.approx(by_hand([0.03, 0.41, 0.62, 0.2, 0.9, 0.77]))
    assert adjusted[0] == pytest.approx(0.18)
    for r, p in zip(rows, adjusted):
        r["p_adjusted"] = p
    assert failing_rows(rows) == []


def test_a_clear_regression_fails_and_a_row_without_p_keeps_its_verdict() -> None:
    rows = [row(1e-6, True), row(0.04, True), row(0.5, False), row(None, True), row(None, False)]
    adjusted = adjusted_p_values(rows)
    assert adjusted[:3] == pytest.approx(by_hand([1e-6, 0.04, 0.5])) and adjusted[3:] == [None, None]
    for r, p in zip(rows, adjusted):
        r["p_adjusted"] = p
    # 0.04 · 3 / 2 = 0.06: no longer significant; 1e-6 · 3 is; the row without a p-value keeps "worse".
    assert failing_rows(rows) == [rows[0], rows[3]]

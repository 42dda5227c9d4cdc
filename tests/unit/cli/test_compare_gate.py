"""`benchtrail compare --fail-on-worse` holds the false discovery rate over every compared cell: the
adjusted p-values (`benchtrail.multiplicity`, which the server's GET /compare uses too) are
Benjamini-Hochberg's, computed by hand from the definition (tests/support/stats.py)."""

from __future__ import annotations

import pytest

from benchtrail.cli.client import failing_rows
from benchtrail.multiplicity import adjusted_p_values
from tests.support.stats import benjamini_hochberg


def row(p: float | None, worse: bool) -> dict:
    return {"result": {"p_value": p, "worse": worse}}


def test_one_marginal_cell_among_many_does_not_fail_the_gate() -> None:
    # Six cells: one "worse" at p = 0.03 (it would fail an unadjusted gate), the others unchanged.
    rows = [row(0.03, True), row(0.41, False), row(0.62, False), row(0.2, False), row(0.9, False), row(0.77, False)]
    adjusted = adjusted_p_values([r["result"]["p_value"] for r in rows])
    assert adjusted == pytest.approx(benjamini_hochberg([0.03, 0.41, 0.62, 0.2, 0.9, 0.77]))
    assert adjusted[0] == pytest.approx(0.18)
    for r, p in zip(rows, adjusted):
        r["p_adjusted"] = p
    assert failing_rows(rows) == []


def test_a_clear_regression_fails_and_a_row_without_p_keeps_its_verdict() -> None:
    rows = [row(1e-6, True), row(0.04, True), row(0.5, False), row(None, True), row(None, False)]
    adjusted = adjusted_p_values([r["result"]["p_value"] for r in rows])
    assert adjusted[:3] == pytest.approx(benjamini_hochberg([1e-6, 0.04, 0.5])) and adjusted[3:] == [None, None]
    for r, p in zip(rows, adjusted):
        r["p_adjusted"] = p
    # 0.04 · 3 / 2 = 0.06: no longer significant; 1e-6 · 3 is; the row without a p-value keeps "worse".
    assert failing_rows(rows) == [rows[0], rows[3]]


def test_cells_without_a_finite_p_value_are_not_counted() -> None:
    # Two p-values count: 0.01 · 2 / 1 and 0.02 · 2 / 2.
    assert adjusted_p_values([0.01, float("nan"), None, 0.02]) == pytest.approx([0.02, None, None, 0.02])


def test_the_table_says_which_verdicts_do_not_hold_over_every_cell() -> None:
    import re
    from io import StringIO

    from benchtrail.cli.client import print_comparison

    def item(scenario: str, worse: bool | None, p_adjusted: float | None, metric: str = "latency_p75") -> dict:
        return {"a_variant": "agent", "b_variant": "agent", "metric": metric,
                "cell": {"scenario": scenario, "load_label": "10 threads"}, "p_adjusted": p_adjusted,
                "result": {"ci_low": 0.1 if worse else -0.2, "ci_high": 0.9, "verdict": "small" if worse else "no difference",
                           "worse": worse, "reference": 10.0,
                           "variant": 10.5, "abs_diff": 0.5, "rel_diff": 0.05, "method": "t-repetitions",
                           "n_ref": 5, "n_var": 5}}

    def table(**kwargs: bool) -> dict[str, str]:
        out = StringIO()
        print_comparison([item("GET /a", True, 0.18), item("GET /b", True, 0.004), item("GET /c", None, 0.9),
                          item("GET /d", True, 0.3, "throughput")], out, **kwargs)
        return {m[0]: ln for ln in out.getvalue().splitlines() if (m := re.search(r"GET /\w", ln))}

    # Each metric's rows are one answer of the server, adjusted together.
    lines = table()
    assert "small (worse), not significant over 3 cells (adjusted p 0.18)" in lines["GET /a"]
    assert "not significant" not in lines["GET /b"] and "not significant" not in lines["GET /c"]
    assert "not significant over 1 cell (adjusted p 0.3)" in lines["GET /d"]
    # The gate adjusts every row together.
    assert "not significant over 4 cells (adjusted p 0.18)" in table(one_family=True)["GET /a"]

"""A frozen compare's Markdown words each verdict as the compare page does, over every cell compared."""

from __future__ import annotations

from benchtrail.sharing.tables import compare_markdown


def item(scenario: str, low: float, high: float, verdict: str, p_adjusted: float | None) -> dict:
    return {"a_variant": "agent", "b_variant": "agent", "p_adjusted": p_adjusted,
            "cell": {"scenario": scenario, "load_label": "10 threads", "mode": ""},
            "result": {"reference": 10.0, "variant": 10.0 + (low + high) / 2, "abs_diff": (low + high) / 2,
                       "rel_diff": (low + high) / 20, "ci_low": low, "ci_high": high, "verdict": verdict}}


def test_a_verdict_that_does_not_hold_over_every_cell_says_so() -> None:
    compare = {"a": "a1", "b": "b1", "items": [
        item("GET /a", 0.1, 0.9, "small", 0.12), item("GET /b", 0.4, 1.2, "large", 0.003),
        item("GET /c", -0.3, 0.2, "no difference", 0.71)]}
    run = {"project": "demo", "agent_version": None, "cells": []}
    text = compare_markdown(compare, {**run, "slug": "a1"}, {**run, "slug": "b1"}, "latency_p75")
    rows = {ln.split(" | ")[1]: ln for ln in text.splitlines() if ln.startswith("| agent |")}
    assert rows["GET /a"].endswith("| small, not significant over 3 cells (adjusted p 0.12) |")
    assert rows["GET /b"].endswith("| large |") and rows["GET /c"].endswith("| no difference |")

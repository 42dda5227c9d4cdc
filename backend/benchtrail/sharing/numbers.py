"""Tidy numbers for tables and images: three significant digits, never scientific notation for the
values a benchmark shows, a sign on differences."""

from __future__ import annotations

import math


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{value:,.{decimals}f}"
    return "0" if text in ("-0", "-0.0", "-0.00") else text


def signed(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    text = fmt(value, digits)
    return text if text.startswith("-") or text == "0" else "+" + text


def pct(rel: float | None) -> str:
    if rel is None or not math.isfinite(rel):
        return "—"
    return signed(100 * rel, 2) + "%"

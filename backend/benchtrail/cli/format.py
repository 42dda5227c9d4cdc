"""Plain-text rendering of runs and comparisons for the terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

COLUMNS = [("count", "count", "{:.0f}"), ("errors", "errors", "{:.0f}"), ("throughput", "req/s", "{:.2f}"),
           ("latency_mean", "mean ms", "{:.2f}"), ("latency_p50", "p50", "{:.2f}"), ("latency_p75", "p75", "{:.2f}"),
           ("latency_p90", "p90", "{:.2f}"), ("latency_p95", "p95", "{:.2f}"), ("latency_p99", "p99", "{:.2f}"),
           ("latency_p999", "p99.9", "{:.2f}"), ("cpu_pct", "cpu %", "{:.1f}"), ("rss_mb", "rss MB", "{:.0f}"),
           ("heap_mb", "heap MB", "{:.0f}"), ("score", "score", "{:.3f}"), ("score_error", "±", "{:.3f}")]


def fmt(value: Any, pattern: str) -> str:
    return "" if value is None else pattern.format(value)


def cell_index(run: dict[str, Any]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l["label"] for l in run["loads"]}
    return {(variants[c["variant_id"]], scenarios[c["scenario_id"]], loads[c["load_id"]], c["mode"]): c
            for c in run["cells"]}


def print_run(run: dict[str, Any], console: Console) -> None:
    console.print(f"run {run['slug']}  project {run['project']}  status {run['status']}"
                  f"{'' if run['is_valid'] else '  INVALID'}  tool {run['tool']}")
    console.print(f"agent {run['agent_version'] or '-'}  commit {run['commit'] or '-'}  branch {run['branch'] or '-'}"
                  f"  environment {run['environment'] or '-'}")
    console.print(f"permalink {run['permalink']}")
    if run["status"] == "failed" and run.get("status_detail"):
        console.print(f"failed: {run['status_detail']}")
    cells = cell_index(run)
    used = [c for c in COLUMNS if any(cell.get(c[0]) is not None for cell in cells.values())]
    table = Table(show_lines=False)
    for name in ("variant", "scenario", "load", "mode"):
        table.add_column(name)
    for _, title, _ in used:
        table.add_column(title, justify="right")
    for (variant, scenario, load, mode), cell in cells.items():
        table.add_row(variant, scenario, load, mode, *(fmt(cell.get(k), p) for k, _, p in used))
    console.print(table)


def compare_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Cells present in both runs, matched by variant, scenario, load and mode."""
    ca, cb = cell_index(a), cell_index(b)
    rows = []
    for key in [k for k in ca if k in cb]:
        for metric, _, _ in COLUMNS:
            va, vb = ca[key].get(metric), cb[key].get(metric)
            if va is None or vb is None:
                continue
            rows.append({"variant": key[0], "scenario": key[1], "load": key[2], "mode": key[3], "metric": metric,
                         "a": va, "b": vb, "diff": vb - va, "rel_pct": (100.0 * (vb - va) / va) if va else None})
    return rows

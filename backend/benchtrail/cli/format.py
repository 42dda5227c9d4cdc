"""Plain-text rendering of runs and comparisons for the terminal."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console
from rich.table import Table

from benchtrail.multiplicity import not_over_cells

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
    criteria = run.get("criteria") or []
    if criteria:
        judged = Table(title="pass/fail criteria", title_justify="left")
        for name in ("criterion", "variant", "scenario", "load", "observed", "result"):
            judged.add_column(name, justify="right" if name == "observed" else "left")
        for c in criteria:
            result = {True: "pass", False: "FAIL"}.get(c.get("ok"), "-")
            judged.add_row(str(c.get("criterion")), c.get("variant") or "all", c.get("scenario") or "all",
                           c.get("load") or "-", fmt(c.get("observed"), "{:.4g}"), result)
        console.print(judged)
    for v in run.get("validity") or []:
        if v.get("ok") is False:
            what = "warning" if v.get("severity") == "warning" else "INVALID"
            console.print(f"validity {what}: {v.get('check')}: {v.get('detail')}", highlight=False)


def print_comparison(rows: list[dict[str, Any]], console: Console, title: str | None = None, *,
                     one_family: bool = False) -> None:
    """`GET /compare` items (or a run's overheads shaped alike) as a table: a / b / b − a, Δ%, the 95%
    interval of the difference, the verdict and how it was reached (method, repetitions per side). A verdict
    whose `p_adjusted` is not below the false discovery rate says over how many cells it was adjusted: the
    rows of its metric (one answer of the server each), or every row with `one_family`."""
    table = Table(show_lines=False, title=title, title_justify="left")
    for name in ("variant", "scenario", "load", "metric"):
        table.add_column(name)
    for name in ("a", "b", "b − a", "Δ%", "95% interval"):
        table.add_column(name, justify="right")
    table.add_column("verdict")
    table.add_column("method (n a+b)")
    counted = Counter("" if one_family else r["metric"] for r in rows if r.get("p_adjusted") is not None)
    for r in rows:
        res = r["result"]
        variant = r["a_variant"] if r["a_variant"] == r["b_variant"] else f"{r['a_variant']} → {r['b_variant']}"
        interval = ("" if res["ci_low"] is None or res["ci_high"] is None
                    else f"[{_num(res['ci_low'])}, {_num(res['ci_high'])}]")
        verdict = res["verdict"] + {True: " (worse)", False: " (better)"}.get(res["worse"], "")
        verdict += not_over_cells(res["ci_low"], res["ci_high"], r.get("p_adjusted"),
                                  counted["" if one_family else r["metric"]])
        table.add_row(variant, r["cell"]["scenario"], r["cell"]["load_label"], r["metric"], _num(res["reference"]),
                      _num(res["variant"]), _num(res["abs_diff"], signed=True),
                      "" if res["rel_diff"] is None else f"{res['rel_diff'] * 100:+.1f}%", interval, verdict,
                      f"{res['method']} ({res['n_ref']}+{res['n_var']})")
    console.print(table)


def _num(value: float | None, signed: bool = False) -> str:
    """Four significant digits (a latency of 0.3012 ms and a throughput of 3412 req/s alike)."""
    return "" if value is None else f"{value:+.4g}" if signed else f"{value:.4g}"

"""A run in the seed reports' shape, as Markdown: one table per load level, one row per scenario, one
column per metric, each cell "baseline / agent / diff (Δ%)". Pure: reads the run document and the
overheads as the API answers them (plain dicts), so a frozen snapshot renders exactly as it was."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchtrail import metrics as catalog
from benchtrail.multiplicity import not_over_cells
from benchtrail.sharing.numbers import fmt, pct, signed

TABLE_METRICS = catalog.names("table")


def cell_index(run: Mapping[str, Any]) -> dict[tuple[int, int, str, int], Mapping[str, Any]]:
    """(scenario id, load id, mode, variant id) -> cell, transaction controllers left out."""
    return {(c["scenario_id"], c["load_id"], c["mode"], c["variant_id"]): c
            for c in run["cells"] if not c["is_transaction"]}


def scenario_name(scenario: Mapping[str, Any]) -> str:
    """The total over a run's scenarios is stored as "*"; people read "All scenarios"."""
    return "All scenarios" if scenario["name"] == "*" else scenario["name"]


def shown_metrics(run: Mapping[str, Any]) -> list[str]:
    return [m for m in TABLE_METRICS if any(c.get(m) is not None for c in run["cells"])]


def _significant(overheads: Mapping[str, Any], metric: str, cell_id: int) -> bool:
    for item in (overheads.get(metric) or {}).get("items", []):
        if item["cell_id"] == cell_id:
            r = item["result"]
            return r["ci_low"] is not None and r["ci_high"] is not None and (r["ci_low"] > 0 or r["ci_high"] < 0)
    return False


def run_markdown(run: Mapping[str, Any], overheads: Mapping[str, Any]) -> str:
    variants: Sequence[Mapping[str, Any]] = sorted(run["variants"], key=lambda v: not v["is_reference"])
    names = " / ".join(v["name"] for v in variants)
    metrics = shown_metrics(run)
    cells = cell_index(run)
    modes = sorted({c["mode"] for c in run["cells"]})
    lines = [f"**{run['project']}** run `{run['slug']}`" + (f", agent {run['agent_version']}" if run.get("agent_version") else ""),
             "", f"Each cell: {names}" + (" / diff (Δ%)" if len(variants) == 2 else "")
             + "; * = the 95% interval of the difference excludes 0.", ""]
    for load in run["loads"]:
        for mode in modes:
            rows = []
            for scenario in run["scenarios"]:
                values = [[cells.get((scenario["id"], load["id"], mode, v["id"])) for v in variants]]
                if all(c is None for c in values[0]):
                    continue
                row = [scenario_name(scenario)]
                for m in metrics:
                    row.append(_cell_text(values[0], m, overheads))
                rows.append(row)
            if not rows:
                continue
            heading = load["label"] + (f" · {mode}" if mode else "")
            header = ["Scenario", *(_title(m, run) for m in metrics)]
            lines += [f"### {heading}", "", "| " + " | ".join(header) + " |",
                      "|" + "|".join(["---"] + ["---:"] * len(metrics)) + "|",
                      *("| " + " | ".join(r) + " |" for r in rows), ""]
    if run.get("permalink"):
        lines.append(f"[Open in Benchtrail]({run['permalink']})")
    return "\n".join(lines).rstrip() + "\n"


def _title(metric: str, run: Mapping[str, Any]) -> str:
    if metric == "score":
        unit = next((c["score_unit"] for c in run["cells"] if c.get("score_unit")), "")
        return f"Score ({unit})" if unit else "Score"
    m = catalog.get(metric)
    return f"{m.title} ({m.unit})"


def _cell_text(cells: Sequence[Mapping[str, Any] | None], metric: str, overheads: Mapping[str, Any]) -> str:
    values = [c.get(metric) if c else None for c in cells]
    if all(v is None for v in values):
        return "—"
    parts = [fmt(v) for v in values]
    if len(cells) == 2 and values[0] is not None and values[1] is not None:
        diff = values[1] - values[0]
        rel = diff / abs(values[0]) if values[0] else None
        mark = "*" if cells[1] is not None and _significant(overheads, metric, cells[1]["id"]) else ""
        parts.append(f"{signed(diff)} ({pct(rel)}){mark}")
    return " / ".join(parts)


def _interval(low: float | None, high: float | None, percent: bool = False) -> str:
    if low is None or high is None:
        return "—"
    return f"[{signed(low)}%, {signed(high)}%]" if percent else f"[{signed(low)}, {signed(high)}]"


def compare_markdown(compare: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any], metric: str,
                     permalink: str | None = None) -> str:
    """Two runs cell by cell, as the compare page's table: run a / run b / diff, Δ%, the 95% interval of
    the diff and its verdict. Reads the `/compare` answer and the two run documents as answered."""
    unit = (next((c["score_unit"] for c in a["cells"] if c.get("score_unit")), "") if metric == "score"
            else catalog.get(metric).unit)

    def name(r: Mapping[str, Any]) -> str:
        return f"run `{r['slug']}`" + (f" (agent {r['agent_version']})" if r.get("agent_version") else "")

    lines = [f"**{a['project']}** {_title(metric, a)}: {name(a)} → {name(b)}", "",
             "Each row: run a / run b / diff (b − a); * = the 95% interval of the diff excludes 0.", "",
             f"| Variant | Scenario | Load | a / b / diff{f' ({unit})' if unit else ''} | Δ% | 95% interval | Verdict |",
             "|---|---|---|---:|---:|---:|---|"]
    counted = sum(1 for item in compare["items"] if item.get("p_adjusted") is not None)
    for item in compare["items"]:
        r, cell = item["result"], item["cell"]
        variant = item["a_variant"] if item["a_variant"] == item["b_variant"] else f"{item['a_variant']} → {item['b_variant']}"
        mark = "*" if r["ci_low"] is not None and r["ci_high"] is not None and (r["ci_low"] > 0 or r["ci_high"] < 0) else ""
        load = cell["load_label"] + (f" · {cell['mode']}" if cell["mode"] else "")
        lines.append(f"| {variant} | {scenario_name({'name': cell['scenario']})} | {load} | "
                     f"{fmt(r['reference'])} / {fmt(r['variant'])} / {signed(r['abs_diff'])}{mark} | {pct(r['rel_diff'])} | "
                     f"{_interval(r['ci_low'], r['ci_high'])} | "
                     f"{r['verdict']}{not_over_cells(r['ci_low'], r['ci_high'], item.get('p_adjusted'), counted)} |")
    if permalink:
        lines += ["", f"[Open in Benchtrail]({permalink})"]
    return "\n".join(lines).rstrip() + "\n"


def trail_markdown(trail: Mapping[str, Any], kind: str, permalink: str | None = None) -> str:
    """A trail (or its overhead trail) as a table, one row per run in version order, with the JMH error
    or the overhead's interval and verdict, and the change points and alerts marked on their runs."""
    t = trail["trail"]
    where = " · ".join(x for x in (scenario_name({"name": t["scenario"]}), t.get("load_label") or "", t["mode"],
                                   t["variant"]) if x and x != "—")
    metric = trail["metric"]
    title = "Score" if metric == "score" else catalog.get(metric).title
    change = {c["run"] for c in trail.get("change_points", [])}
    alerted: dict[str, list[str]] = {}
    for a in trail.get("alerts", []):
        alerted.setdefault(a["run"], []).append(f"#{a['id']} {a['direction']} ({a['state']})")
    lines = [f"**{'Overhead of ' if kind == 'overhead' else ''}{title}** · {where}", ""]
    if kind == "overhead":
        lines += [f"Percent of the reference ({trail.get('reference_variant') or 'reference'}) per run.", "",
                  "| Run | Agent version | Overhead | Diff | 95% interval | Verdict | Change point | Alerts |",
                  "|---|---|---:|---:|---:|---|---|---|"]
        for p in trail["points"]:
            lines.append(f"| `{p['run']}` | {p.get('agent_version') or '—'} | {signed(p['value_pct'])}% | {signed(p['abs_diff'])} | "
                         f"{_interval(p['ci_low'], p['ci_high'])} | {p['verdict']} | {'◆' if p['run'] in change else ''} | "
                         f"{', '.join(alerted.get(p['run'], []))} |")
    else:
        unit = trail.get("unit") or ""
        lines += [f"| Run | Agent version | {title}{f' ({unit})' if unit else ''} | ± error | Valid | Change point | Alerts |",
                  "|---|---|---:|---:|---|---|---|"]
        for p in trail["points"]:
            lines.append(f"| `{p['run']}` | {p.get('agent_version') or '—'} | {fmt(p['value'])} | {fmt(p.get('error'))} | "
                         f"{'yes' if p['is_valid'] else 'no'} | {'◆' if p['run'] in change else ''} | "
                         f"{', '.join(alerted.get(p['run'], []))} |")
    if permalink:
        lines += ["", f"[Open in Benchtrail]({permalink})"]
    return "\n".join(lines).rstrip() + "\n"

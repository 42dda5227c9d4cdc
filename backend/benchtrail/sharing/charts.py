"""Images a README or a chat can embed, drawn on the server with matplotlib (no browser needed):
a run's metric as horizontal grouped bars (full labels, one colour per variant, the value at each
bar's end), and a shields-style badge. Pure: plain dicts in, bytes out."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal
from xml.sax.saxutils import escape

from benchtrail import metrics as catalog
from benchtrail.sharing.numbers import fmt, signed
from benchtrail.sharing.tables import cell_index, scenario_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Format = Literal["svg", "png"]
# Okabe-Ito: distinguishable with every common colour-vision deficiency; variant i always gets colour i.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
MEDIA_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


class NoData(ValueError):
    """The run has no value of this metric."""


def run_chart(run: Mapping[str, Any], metric: str, fmt_: Format) -> bytes:
    variants = sorted(run["variants"], key=lambda v: not v["is_reference"])
    cells = cell_index(run)
    modes = sorted({c["mode"] for c in run["cells"]})
    rows: list[tuple[str, list[float | None]]] = []
    for load in run["loads"]:
        for scenario in run["scenarios"]:
            for mode in modes:
                values = [(cells.get((scenario["id"], load["id"], mode, v["id"])) or {}).get(metric)
                          for v in variants]
                if any(v is not None for v in values):
                    label = f"{scenario_name(scenario)} · {load['label']}" + (f" · {mode}" if mode else "")
                    rows.append((label, values))
    if not rows:
        raise NoData(f"run '{run['slug']}' has no {metric} values")
    from matplotlib.figure import Figure  # imported when first drawing: it adds a second to start-up

    unit = _unit(run, metric)
    bar_h = 0.8 / len(variants)
    fig = Figure(figsize=(9, 0.9 + 0.32 * len(rows) * len(variants) + 0.4), dpi=100)
    ax = fig.add_subplot()
    top = max((v for _, vals in rows for v in vals if v is not None), default=1.0) or 1.0
    for vi, variant in enumerate(variants):
        ys = [len(rows) - 1 - ri + 0.4 - bar_h * (vi + 0.5) for ri in range(len(rows))]  # reference on top
        vals = [vals[vi] for _, vals in rows]
        ax.barh(ys, [v or 0 for v in vals], height=bar_h * 0.92, color=PALETTE[vi % len(PALETTE)],
                label=variant["name"])
        for y, v in zip(ys, vals):
            if v is not None:
                ax.text(v + top * 0.01, y, fmt(v), va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [label for label, _ in reversed(rows)], fontsize=9)
    ax.set_xlim(0, top * 1.15)
    ax.set_xlabel(unit)
    ax.set_title(f"{_title(metric)} · {run['project']} run {run['slug']}"
                 + (f" · agent {run['agent_version']}" if run.get("agent_version") else ""), fontsize=10)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _save(fig, fmt_)


def compare_chart(compare: Mapping[str, Any], title: str, fmt_: Format) -> bytes:
    """Run b against run a, one bar per matched cell: the change in percent of run a's value, with the
    95% interval of the difference as error bars and the change written at each bar's end. Reads the
    `/compare` answer as the API gives it (`CompareOut`)."""
    rows = []
    for item in compare["items"]:
        r, cell = item["result"], item["cell"]
        if r.get("rel_diff") is None:
            continue
        variant = item["a_variant"] if item["a_variant"] == item["b_variant"] else f"{item['a_variant']} → {item['b_variant']}"
        label = " · ".join(x for x in (variant, scenario_name({"name": cell["scenario"]}), cell["load_label"], cell["mode"])
                           if x and x != "—")
        low, high = r.get("ci_low_rel"), r.get("ci_high_rel")
        rows.append((label, 100 * r["rel_diff"], None if low is None else 100 * low, None if high is None else 100 * high,
                     r.get("verdict", "")))
    if not rows:
        raise NoData(f"runs '{compare['a']}' and '{compare['b']}' have no cells in common with a relative change")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 1.4 + 0.34 * len(rows)), dpi=100)
    ax = fig.add_subplot()
    ys = list(range(len(rows) - 1, -1, -1))  # the first row on top, like the table
    values = [v for _, v, _, _, _ in rows]
    err = [[v - lo if lo is not None else 0 for _, v, lo, _, _ in rows],
           [hi - v if hi is not None else 0 for _, v, _, hi, _ in rows]]
    ax.barh(ys, values, height=0.6, color=PALETTE[0], xerr=err, ecolor="#333333", capsize=3, label="Δ% (b − a)")
    ends = [max(abs(v), abs(lo or 0), abs(hi or 0)) for _, v, lo, hi, _ in rows]
    span = max(ends) or 1.0
    for y, (_, v, lo, hi, verdict) in zip(ys, rows):
        edge = max(v, hi if hi is not None else v) if v >= 0 else min(v, lo if lo is not None else v)
        ax.text(edge + (span * 0.02 if v >= 0 else -span * 0.02), y, f"{signed(v)}%", va="center",
                ha="left" if v >= 0 else "right", fontsize=8)
    ax.axvline(0, color="#555555", linewidth=0.8)
    ax.set_yticks(ys, [label for label, *_ in rows], fontsize=9)
    ax.set_xlim(-span * 1.3, span * 1.3)
    ax.set_xlabel("change of run b against run a (%), with the 95% interval")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _save(fig, fmt_)


def interval_pct(point: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """An overhead point's 95% interval in percent of the reference: value_pct = 100 · abs_diff / |reference|,
    so the reference is abs_diff / rel_diff."""
    rel, diff = point.get("rel_diff"), point.get("abs_diff")
    if not rel or not diff or point.get("ci_low") is None or point.get("ci_high") is None:
        return None, None
    reference = abs(diff / rel)
    return 100 * point["ci_low"] / reference, 100 * point["ci_high"] / reference


def trail_chart(trail: Mapping[str, Any], kind: Literal["trail", "overhead"], fmt_: Format) -> bytes:
    """A trail (or its overhead trail) over the runs in version order: JMH score errors as error bars,
    the overhead's 95% interval as a band, change points as diamonds and alerts as triangles, each value
    written above its point while they fit. Reads `/trails/{id}` or `/trails/{id}/overhead` as answered."""
    points = trail["points"]
    if not points:
        raise NoData(f"trail {trail['trail']['id']} has no {trail['metric']} values"
                     + (" against a reference" if kind == "overhead" else ""))
    from matplotlib.figure import Figure

    key = "value_pct" if kind == "overhead" else "value"
    xs = list(range(len(points)))
    ys = [p[key] for p in points]
    labels = [p.get("agent_version") or p["run"] for p in points]
    fig = Figure(figsize=(9, 4.2), dpi=100)
    ax = fig.add_subplot()
    color = PALETTE[0]
    errors = [p.get("error") for p in points] if kind == "trail" else []
    if any(e is not None for e in errors):
        ax.errorbar(xs, ys, yerr=[e or 0 for e in errors], color=color, marker="o", capsize=3,
                    label=f"{trail['trail']['variant']} ± JMH error (99.9%)")
    else:
        ax.plot(xs, ys, color=color, marker="o", label=trail["trail"]["variant"] if kind == "trail"
                else f"{trail['trail']['variant']} − {trail.get('reference_variant') or 'reference'}")
    if kind == "overhead":
        band = [interval_pct(p) for p in points]
        if any(lo is not None for lo, _ in band):
            ax.fill_between(xs, [lo if lo is not None else y for (lo, _), y in zip(band, ys)],
                            [hi if hi is not None else y for (_, hi), y in zip(band, ys)],
                            color=color, alpha=0.18, linewidth=0, label="95% interval")
        ax.axhline(0, color="#555555", linewidth=0.8)
    invalid = [i for i, p in enumerate(points) if not p.get("is_valid", True)]
    if invalid:
        ax.scatter([xs[i] for i in invalid], [ys[i] for i in invalid], color="#b9c0cb", zorder=3, label="invalid run")
    pos = {p["run"]: i for i, p in enumerate(points)}
    cps = [pos[c["run"]] for c in trail.get("change_points", []) if c["run"] in pos]
    if cps:
        ax.scatter([xs[i] for i in cps], [ys[i] for i in cps], marker="D", s=110, facecolors="none",
                   edgecolors="#b42318", linewidths=2, zorder=4, label="change point")
    alerted = [(pos[a["run"]], a) for a in trail.get("alerts", []) if a["run"] in pos]
    if alerted:
        ax.scatter([xs[i] for i, _ in alerted], [ys[i] for i, _ in alerted], marker="^", s=90, color="#dc6803",
                   zorder=5, label="alert")
        for i, a in alerted:
            ax.annotate(f"alert #{a['id']} {a['direction']}", (xs[i], ys[i]), textcoords="offset points",
                        xytext=(0, -16), ha="center", fontsize=7, color="#dc6803")
    if len(points) <= 40:
        for x, y, e in zip(xs, ys, errors or [None] * len(points)):
            text = f"{signed(y)}%" if kind == "overhead" else fmt(y) + (f" ±{fmt(e)}" if e is not None else "")
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 8), ha="center", fontsize=7)
    step = max(1, len(points) // 20)
    ax.set_xticks(xs[::step], labels[::step], rotation=30 if len(points) > 8 else 0, ha="right" if len(points) > 8 else "center",
                  fontsize=8)
    ax.set_xlabel("agent version (run order)")
    unit = trail.get("unit", "") if kind == "trail" else "% of the reference"
    ax.set_ylabel(f"{_title(trail['metric'])} ({unit})" if unit and kind == "trail" else unit or _title(trail["metric"]))
    t = trail["trail"]
    where = " · ".join(x for x in (scenario_name({"name": t["scenario"]}), t.get("load_label") or "", t["mode"], t["variant"]) if x and x != "—")
    ax.set_title(f"{'Overhead of ' if kind == 'overhead' else ''}{_title(trail['metric'])} · {where}", fontsize=10)
    ax.legend(loc="best", fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _save(fig, fmt_)


def percentile_chart(run: Mapping[str, Any], spectrum: Sequence[Mapping[str, Any]], load_id: int | None,
                     fmt_: Format) -> bytes:
    """The latency percentile spectrum of each variant per scenario at one load level (all loads when
    None), x = 1/(1 − p) on a log axis so the tail is stretched out, as the run page draws it."""
    by_cell = {c["cell_id"]: c["points"] for c in spectrum}
    variants = sorted(run["variants"], key=lambda v: not v["is_reference"])
    colour = {v["id"]: PALETTE[i % len(PALETTE)] for i, v in enumerate(variants)}
    names = {v["id"]: v["name"] for v in variants}
    scenarios = {s["id"]: scenario_name(s) for s in run["scenarios"]}
    loads = {ld["id"]: ld["label"] for ld in run["loads"]}
    cells = [c for c in run["cells"] if c["id"] in by_cell and not c["is_transaction"]
             and (load_id is None or c["load_id"] == load_id)]
    if not cells:
        raise NoData(f"run '{run['slug']}' has no latency histograms" + (f" at load {load_id}" if load_id else ""))
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 5), dpi=100)
    ax = fig.add_subplot()
    styles = ("-", "--", ":", "-.")
    scenario_style = {sid: styles[i % len(styles)] for i, sid in enumerate(sorted({c["scenario_id"] for c in cells}))}
    ticks = (0, 50, 75, 90, 99, 99.9, 99.99)
    for c in sorted(cells, key=lambda c: (c["load_id"], c["scenario_id"], c["variant_id"])):
        pts = [p for p in by_cell[c["id"]] if p["percentile"] < 100]
        label = f"{names[c['variant_id']]} · {scenarios[c['scenario_id']]}" + (
            f" · {loads[c['load_id']]}" if load_id is None else "")
        ax.plot([1 / (1 - p["percentile"] / 100) for p in pts], [p["value_ms"] for p in pts],
                color=colour[c["variant_id"]], linestyle=scenario_style[c["scenario_id"]], label=label)
        last = next((p for p in reversed(pts) if p["percentile"] <= 99.9), None)
        if last is not None:
            ax.annotate(f"p{last['percentile']:g} {fmt(last['value_ms'])}", (1 / (1 - last["percentile"] / 100), last["value_ms"]),
                        textcoords="offset points", xytext=(4, 0), fontsize=7, color=colour[c["variant_id"]])
    ax.set_xscale("log")
    ax.set_xticks([1 / (1 - p / 100) for p in ticks], [f"p{p:g}" for p in ticks], fontsize=8)
    ax.set_xlabel("percentile (tail stretched: x = 1/(1 − p))")
    ax.set_ylabel("latency (ms)")
    title = "Latency percentile spectrum" + (f" · {loads[load_id]}" if load_id is not None else "")
    ax.set_title(f"{title} · {run['project']} run {run['slug']}", fontsize=10)
    ax.legend(loc="upper left", fontsize=7, frameon=False, ncol=2 if len(cells) > 8 else 1)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _save(fig, fmt_)


def series_chart(run: Mapping[str, Any], series: Sequence[Mapping[str, Any]], metric: str, load_id: int,
                 fmt_: Format) -> bytes:
    """One series metric over time at one load level, every variant (and named process) on one chart,
    as the run page's "Over time" section draws it: the series of the whole load level (no scenario),
    x in seconds since the load level's first point. Each line ends with the mean of its points."""
    chosen = [s for s in series if s["load_id"] == load_id and s["metric"] == metric and s["scenario_id"] is None
              and s["t_ms"]]
    loads = {ld["id"]: ld["label"] for ld in run["loads"]}
    if not chosen:
        raise NoData(f"run '{run['slug']}' has no '{metric}' series of the whole load level {loads[load_id]}")
    variants = sorted(run["variants"], key=lambda v: not v["is_reference"])
    colour = {v["id"]: PALETTE[i % len(PALETTE)] for i, v in enumerate(variants)}
    names = {v["id"]: v["name"] for v in variants}
    order = {v["id"]: i for i, v in enumerate(variants)}
    t0 = min(s["t_ms"][0] for s in chosen)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4.5), dpi=100)
    ax = fig.add_subplot()
    for s in sorted(chosen, key=lambda s: (order[s["variant_id"]], s.get("process") or "")):
        x = [(t - t0) / 1000 for t in s["t_ms"]]
        y = list(s["values"])
        name = names[s["variant_id"]] + (f" · {s['process']}" if s.get("process") else "")
        ax.plot(*_break_at_gaps(x, y, (s["interval_ms"] or 0) / 1000), color=colour[s["variant_id"]], marker="o",
                markersize=2.5, linewidth=1.2, linestyle="--" if s.get("process") else "-", label=name)
        note = f"mean {fmt(sum(y) / len(y))}"
        ax.annotate(note, (x[-1], y[-1]), textcoords="offset points", xytext=(4, 0), fontsize=7,
                    color=colour[s["variant_id"]])
    unit = catalog.CATALOG[metric].unit if metric in catalog.CATALOG else ""
    ax.set_xlabel("seconds since the load level started")
    ax.set_ylabel(_title(metric) + (f" ({unit})" if unit else ""))
    ax.set_title(f"{_title(metric)} over time · {loads[load_id]} · {run['project']} run {run['slug']}",
                 fontsize=10)
    ax.legend(loc="best", fontsize=7, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return _save(fig, fmt_)


def _break_at_gaps(x: list[float], y: list[float], step: float) -> tuple[list[float], list[float]]:
    """The line broken (a NaN) where the next point comes more than one interval later: the repetitions
    of a load level are not joined across the other variant's turn (as the run page draws them)."""
    if not step:
        return x, y
    gx, gy = [], []
    for i, (xi, yi) in enumerate(zip(x, y)):
        if i and xi - x[i - 1] > step * 1.5:
            gx.append((xi + x[i - 1]) / 2)
            gy.append(math.nan)
        gx.append(xi)
        gy.append(yi)
    return gx, gy


def badge(label: str, value: str, color: str) -> bytes:
    """A flat badge; widths from a 7 px-per-character estimate of Verdana 11 px, like shields.io."""
    lw, vw = 10 + 7 * len(label), 10 + 7 * len(value)
    label_x, value_x = lw / 2, lw + vw / 2
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{lw + vw}" height="20" role="img" '
           f'aria-label="{escape(label)}: {escape(value)}"><title>{escape(label)}: {escape(value)}</title>'
           f'<rect width="{lw}" height="20" fill="#555"/><rect x="{lw}" width="{vw}" height="20" fill="{color}"/>'
           f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
           f'<text x="{label_x}" y="14">{escape(label)}</text><text x="{value_x}" y="14">{escape(value)}</text>'
           f'</g></svg>')
    return svg.encode()


def overhead_badge(metric: str, point: Mapping[str, Any] | None) -> bytes:
    label = f"{_title(metric)} overhead"
    if point is None:
        return badge(label, "no data", "#9f9f9f")
    rel = point.get("rel_diff")
    if rel is None:
        return badge(label, "no data", "#9f9f9f")
    value = f"{100 * rel:+.1f}%"
    if point.get("ci_low") is not None and point.get("ci_high") is not None and point["abs_diff"]:
        half_rel = (point["ci_high"] - point["ci_low"]) / 2 * rel / point["abs_diff"]
        value += f" ±{abs(100 * half_rel):.1f}"
    color = {"no difference": "#4c1", "small": "#dfb317", "medium": "#fe7d37", "large": "#e05d44"}.get(
        point.get("verdict", ""), "#9f9f9f")
    return badge(label, value, color)


def _title(metric: str) -> str:
    """The catalog's title; a series metric outside the catalog keeps its own name."""
    if metric == "score":
        return "Score"
    return catalog.CATALOG[metric].title if metric in catalog.CATALOG else metric


def _unit(run: Mapping[str, Any], metric: str) -> str:
    if metric == "score":
        return next((c["score_unit"] for c in run["cells"] if c.get("score_unit")), "")
    return catalog.get(metric).unit


def _save(fig: Figure, fmt_: Format) -> bytes:
    import matplotlib

    buf = io.BytesIO()
    # Text stays text in SVG (searchable, readable by screen readers); a fixed hash salt and no date
    # make the same data give the same bytes, so ETags are stable.
    metadata = {"Date": None} if fmt_ == "svg" else {}
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "benchtrail"}):
        fig.savefig(buf, format=fmt_, metadata=metadata)
    return buf.getvalue()

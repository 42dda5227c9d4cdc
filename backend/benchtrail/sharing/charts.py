"""Images a README or a chat can embed, drawn on the server with matplotlib (no browser needed):
a run's metric as horizontal grouped bars (full labels, one colour per variant, the value at each
bar's end), and a shields-style badge. Pure: plain dicts in, bytes out."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal
from xml.sax.saxutils import escape

from benchtrail import metrics as catalog
from benchtrail.sharing.numbers import fmt
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
    return "Score" if metric == "score" else catalog.get(metric).title


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

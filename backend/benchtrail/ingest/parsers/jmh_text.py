"""JMH human-readable result table (`-rf text`, the console summary).

Columns are not reliably aligned (hand-edited files exist), so every row is read from the right:
Units, Error, '±', Score, Cnt, Mode; what remains is the benchmark name and its @Param values.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..model import NONE_LOAD, ParsedFile, ParseError, ParseOptions, ReportedCell
from ..textio import parse_number, read_text
from .jmh_common import normalise_secondary, percentile_stat, scenario_of, time_unit_ms

MODES = {"thrpt", "avgt", "sample", "ss", "all"}
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
# "Bench.method:method·p0.50" (JMH <= 1.36) or "Bench.method:p0.50" (>= 1.37).
_PERCENTILE = re.compile(r"^(?P<base>[^:]+):(?:[^:·]*·)?p(?P<frac>[01](?:\.\d+)?)$")


def parse(path: Path, options: ParseOptions | None = None) -> ParsedFile:
    options = options or ParseOptions()
    text = read_text(path)
    lines = text.split("\n")
    header_idx = next((i for i, line in enumerate(lines) if line.split()[:1] == ["Benchmark"]),
                      None)
    if header_idx is None:
        raise ParseError("no 'Benchmark … Mode … Units' header line (not a JMH text table)")
    header = lines[header_idx].split()
    param_names = [h[1:-1] for h in header if h.startswith("(") and h.endswith(")")]
    load = options.load or NONE_LOAD
    cells: dict[tuple, ReportedCell] = {}
    order: list[tuple] = []
    warnings: list[str] = []
    for n, raw in enumerate(lines[header_idx + 1:], start=header_idx + 2):
        if not raw.strip():
            continue
        if raw.split()[:1] == ["Benchmark"]:
            continue
        name, params, mode, cnt, score, error, unit, approx = _row(raw, n, len(param_names))
        pm = _PERCENTILE.match(name)
        params_d = dict(zip(param_names, params, strict=True))
        if pm:
            key = (pm.group("base"), mode, tuple(params))
            base = cells.get(key)
            if base is None:
                raise ParseError(f"percentile row for '{pm.group('base')}' before its "
                                 f"benchmark row", line=n)
            _add_percentile(base, pm.group("frac"), score, unit)
            continue
        # A secondary result ("Bench.method:·gc.alloc.rate") or @Group member follows the colon.
        bench, _, secondary = name.partition(":")
        scenario = scenario_of(bench, params_d, normalise_secondary(secondary))
        stats = {"score": score}
        if error is not None:
            stats["score_error"] = error
        if approx:
            params_d["score_approx"] = "≈ (JMH printed '≈ 0' or '≈ 10⁻ⁿ': below its printed precision)"
            warnings.append(f"line {n}: score of {scenario} printed as an approximation (≈); the value is its "
                            "order of magnitude")
        if cnt is not None:
            params_d["cnt"] = str(cnt)
        cell = ReportedCell(scenario=scenario, load=load, stats=stats, unit=unit, mode=mode,
                            params=params_d)
        key = (name, mode, tuple(params))
        if key in cells:
            raise ParseError(f"duplicate row for {name} ({mode})", line=n)
        cells[key] = cell
        order.append(key)
    if not cells:
        raise ParseError("JMH table has a header but no result rows", line=header_idx + 1)
    return ParsedFile(tool="jmh", format="jmh-text", reported=[cells[k] for k in order],
                      meta={"params": param_names}, warnings=warnings)


def _row(raw: str, line: int, n_params: int):
    tokens = raw.split()
    if len(tokens) < 4:
        raise ParseError(f"too few columns in {raw.strip()!r}", line=line)
    unit = tokens.pop()
    error: float | None = None
    if len(tokens) >= 2 and tokens[-2] == "±":
        error = parse_number(tokens.pop(), line=line, field="Error")
        tokens.pop()
    score_text = tokens.pop()
    approx = False
    if tokens and tokens[-1] == "≈":
        # JMH's ScoreFormatter prints a score below 10^-precision as "≈ 10ⁿ", n the rounded log10 of it, and
        # an exact 0 (an allocation rate of a benchmark that allocates nothing) as "≈ 0".
        tokens.pop()
        exp = score_text.translate(_SUPERSCRIPT)
        if exp == "0":
            score = 0.0
        elif exp.startswith("10") and re.fullmatch(r"-?\d+", exp[2:]):
            score = 10.0 ** float(exp[2:])
        else:
            raise ParseError(f"unreadable approximate score '≈ {score_text}' (JMH prints '≈ 0' or '≈ 10⁻ⁿ')",
                             line=line, field="Score")
        approx = True
    else:
        score = parse_number(score_text, line=line, field="Score")
    cnt: int | None = None
    if tokens and tokens[-1].isdigit() and len(tokens) >= 2 and tokens[-2] in MODES:
        cnt = int(tokens.pop())
    if not tokens or tokens[-1] not in MODES:
        raise ParseError(f"no JMH mode (thrpt/avgt/sample/ss) in {raw.strip()!r}", line=line,
                         field="Mode")
    mode = tokens.pop()
    if len(tokens) != 1 + n_params:
        raise ParseError(f"expected a benchmark name and {n_params} parameter value(s), got "
                         f"{tokens!r}", line=line, field="Benchmark")
    return tokens[0], tokens[1:], mode, cnt, score, error, unit, approx


def _add_percentile(cell: ReportedCell, frac: str, value: float, unit: str) -> None:
    ms = time_unit_ms(unit)
    stat, in_catalog = percentile_stat(frac)
    if ms is not None and in_catalog:
        cell.stats[stat] = value * ms
    elif ms is not None:  # e.g. p0.9999: no catalog metric, keep it in ms
        cell.params[f"{stat}_ms"] = repr(value * ms)
    else:  # not a time unit: keep the raw value in the row's own unit
        cell.params[f"{stat.replace('latency_', 'score_')} [{unit}]"] = repr(value)

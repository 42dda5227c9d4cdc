"""Validity checks computed from the ingested data, so they hold for uploads and runner runs alike.

Each check gives rows like the runner's (`check`, `ok`, `detail`, `load`) plus `severity`, `variant`,
`scenario` and `source: "ingest"`. A failed row of severity "error" makes the run invalid (its points
leave trails and never alert); a "warning" is shown with its reason and leaves the run valid.

- **stall** (error): inside a load's measured window (after warm-up, first and last partial interval
  left out) an interval whose throughput is below `STALL_FRACTION` of the load's median interval,
  or an interval with no sample at all; judged when the median interval holds ≥ 50 samples.
- **delayed ACK** (warning): most latencies of a cell on a plateau at 38–50 ms while the fastest is
  far below: the Nagle / delayed-ACK interaction of a server without TCP_NODELAY, so the run
  measures TCP timers, not the service.
- **samples for pXX** (warning): fewer than `TAIL_SAMPLES` samples above a requested percentile
  (the project's analysed metrics and the run's criteria); per repetition when a cell has several.
- **resolution of pXX** (warning): a requested percentile under `COARSE_STEPS` of the steps in which
  the cell's files record latency (JMeter whole ms, hey CSV 0.1 ms): it moves in jumps of more than
  5 %, so its differences are rounded to whole steps (the A/B intervals allow for that rounding:
  `analysis.ab`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchtrail.ingest import histogram as hdr

STALL_FRACTION = 0.2           # an interval under 20 % of the median interval is a stall
STALL_MIN_SAMPLES = 50         # judged only when the median interval holds this many samples: below,
                               # an empty interval can be chance (Poisson(50) ≤ 10 has p ≈ 1e-11)
PLATEAU_LOW_MS, PLATEAU_HIGH_MS = 38.0, 50.0   # Linux delayed ACK: 40 ms, plus the request itself
PLATEAU_SHARE = 0.5            # at least half of the samples on the plateau
PLATEAU_MIN_MS = 10.0          # ... while the fastest took under 10 ms
PLATEAU_MIN_COUNT = 20
TAIL_SAMPLES = 10              # a percentile needs this many samples above it
COARSE_STEPS = 20              # a percentile under 20 recording steps moves in jumps of over 5 %
# The source of rows people wrote (runs/exclusion.py), kept when the ingest judges a run again.
MANUAL = "manual"


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    ok: bool
    detail: str
    severity: str = "error"    # "error": invalid run; "warning": shown, run stays valid
    variant: str | None = None
    scenario: str | None = None
    load: str | None = None

    def row(self) -> dict[str, Any]:
        return {"check": self.check, "ok": self.ok, "detail": self.detail, "severity": self.severity,
                "variant": self.variant, "scenario": self.scenario, "load": self.load, "source": "ingest"}


def is_valid(rows: Iterable[dict[str, Any]]) -> bool:
    """A run is valid when every failed row is only a warning."""
    return all(r.get("ok", True) or r.get("severity") == "warning" for r in rows)


# ------------------------------------------------------------------------------------------ stalls

def stall(t_ms: Sequence[int], throughput: Sequence[float], interval_ms: int, *, warmup_s: float = 0.0,
          variant: str | None = None, load: str | None = None,
          fraction: float = STALL_FRACTION) -> Finding | None:
    """Judge one load's throughput per interval (req/s at interval starts `t_ms`). None when the
    measured window has fewer than three whole intervals (too short to judge)."""
    if not t_ms or interval_ms <= 0:
        return None
    points = dict(zip((int(t) for t in t_ms), (float(v) for v in throughput)))
    first, last = min(points), max(points)
    start = first + int(round(warmup_s * 1000))
    # whole intervals only: the first and the last are partial (the load starts and ends inside them)
    grid = [t for t in range(first + interval_ms, last, interval_ms) if t >= start]
    if len(grid) < 3:
        return None
    values = np.array([points.get(t, 0.0) for t in grid])
    present = np.array([t in points for t in grid])
    median = float(np.median(values[present])) if present.any() else 0.0
    if median * interval_ms / 1000.0 < STALL_MIN_SAMPLES:
        return None
    low = (values < fraction * median) | ~present
    who = variant or "all"
    if not low.any():
        return Finding("stall", True, f"{len(grid)} intervals of {interval_ms / 1000:g} s, none under "
                       f"{fraction:.0%} of the median {median:,.1f} req/s", variant=variant, load=load)
    # the longest run of consecutive low intervals, reported in seconds from the load's first interval
    runs, i = [], 0
    while i < len(grid):
        if low[i]:
            j = i
            while j + 1 < len(grid) and low[j + 1]:
                j += 1
            runs.append((i, j))
            i = j + 1
        else:
            i += 1
    a, b = max(runs, key=lambda r: (r[1] - r[0], -r[0]))
    worst = float(values[a:b + 1].min())
    missing = int((~present).sum())
    seconds = ((grid[a] - first) / 1000, (grid[b] + interval_ms - first) / 1000)
    detail = (f"{who}: throughput fell to {worst:,.1f} req/s ({worst / median:.0%} of the median "
              f"{median:,.1f} req/s) for {seconds[1] - seconds[0]:g} s (seconds {seconds[0]:g}–{seconds[1]:g} "
              f"of the load); {int(low.sum())} of {len(grid)} intervals under {fraction:.0%}"
              + (f", {missing} with no sample at all" if missing else "")
              + ": the measurement stalled (GC pause, connection stall, a frozen target or load generator)")
    return Finding("stall", False, detail, variant=variant, load=load)


# ------------------------------------------------------------------------------------- delayed ACK

def plateau_share(encoded: str, low_ms: float = PLATEAU_LOW_MS, high_ms: float = PLATEAU_HIGH_MS) -> float:
    """Share of a stored histogram's samples with latency in [low_ms, high_ms]."""
    hist = hdr.decode(encoded)
    total = hist.get_total_count()
    if total == 0:
        return 0.0
    counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len]
    inside = 0
    for index in np.flatnonzero(counts):
        value_ms = hist.get_value_from_index(int(index)) / 1000.0
        if low_ms <= value_ms <= high_ms:
            inside += int(counts[index])
    return inside / total


def delayed_ack(cell: dict[str, Any], *, variant: str, scenario: str, load: str | None) -> Finding | None:
    encoded, low = cell.get("histogram"), cell.get("latency_min")
    if not encoded or low is None or (cell.get("count") or 0) < PLATEAU_MIN_COUNT:
        return None
    share = plateau_share(encoded)
    if share < PLATEAU_SHARE or low >= PLATEAU_MIN_MS:
        return None
    detail = (f"{variant} / {scenario}: {share:.0%} of the latencies sit on a plateau at "
              f"{PLATEAU_LOW_MS:g}–{PLATEAU_HIGH_MS:g} ms while the fastest took {low:.2f} ms. This is the "
              f"delayed-ACK / Nagle signature: the server (or client) writes responses without TCP_NODELAY and "
              f"each one waits for the peer's delayed ACK (40 ms on Linux), so the run measures TCP timers, not "
              f"the service. Likely cause: a JDK HttpServer without -Dsun.net.httpserver.nodelay=true, or a "
              f"socket without TCP_NODELAY")
    return Finding("delayed ACK", False, detail, severity="warning", variant=variant, scenario=scenario, load=load)


# ------------------------------------------------------------------------------ too few samples

def needed_samples(percentile: float, tail: int = TAIL_SAMPLES) -> int:
    """Samples needed so that at least `tail` lie above the percentile: n·(1 − p/100) ≥ tail."""
    return math.ceil(round(tail / (1.0 - percentile / 100.0), 6))


def samples_per_repetition(cell: dict[str, Any]) -> int:
    reps = (cell.get("extra") or {}).get("repetitions") or []
    counts = [int(r["count"]) for r in reps if r.get("count") is not None]
    return min(counts) if counts else int(cell.get("count") or 0)


def too_few_samples(cells: Sequence[tuple[str, str, str | None, dict[str, Any]]],
                    percentiles: Sequence[tuple[str, float]]) -> list[Finding]:
    """One warning per requested percentile that some cells cannot support. `cells` holds
    (variant, scenario, load label, combined cell values)."""
    def detail(metric: str, p: float) -> str | None:
        need = needed_samples(p)
        short = [(samples_per_repetition(c), v, s, ld) for v, s, ld, c in cells
                 if c.get("histogram") and samples_per_repetition(c) < need]
        if not short:
            return None
        n, v, s, ld = min(short, key=lambda x: x[0])
        return (f"{metric} needs at least {need:,} samples (so that {TAIL_SAMPLES} lie above the "
                f"{p:g}th percentile); {len(short)} of {len(cells)} cells have fewer"
                f"{' per repetition' if any('repetitions' in (c.get('extra') or {}) for *_, c in cells) else ''}, "
                f"the smallest {_where(v, s, ld)} with {n:,}: there only "
                f"{math.floor(round(n * (1 - p / 100), 6))} samples lie above {metric}, so it is an extreme "
                f"value, not a stable percentile")

    return _per_percentile("samples for", percentiles, detail)


def _per_percentile(check: str, percentiles: Sequence[tuple[str, float]],
                    detail: Callable[[str, float], str | None]) -> list[Finding]:
    """A warning "<check> <metric>" for each requested percentile whose `detail(metric, p)` names cells."""
    return [Finding(f"{check} {metric}", False, text, severity="warning")
            for metric, p in percentiles if (text := detail(metric, p)) is not None]


def _where(variant: str, scenario: str, load: str | None) -> str:
    """A cell in a message: variant / scenario / load label."""
    return f"{variant} / {scenario}" + (f" / {load}" if load else "")


# ---------------------------------------------------------------------------- coarse latency

def latency_step_us(latencies_us: Sequence[int] | NDArray[np.int64]) -> int | None:
    """The step in which a file records latency (µs): the greatest common divisor of its latencies, when
    two of them are that step apart (a few scattered values, say 3 and 12 ms, do not show the step)."""
    values = np.unique(np.asarray(latencies_us, dtype=np.int64))
    if values.size < 2:
        return None
    step = int(np.gcd.reduce(values))
    return step if step and int(np.diff(values).min()) == step else None


def coarse_latency(cells: Sequence[tuple[str, str, str | None, dict[str, Any]]],
                   percentiles: Sequence[tuple[str, float]],
                   steps: dict[tuple[str, str | None], int]) -> list[Finding]:
    """One warning per requested percentile that some cells hold in fewer than `COARSE_STEPS` steps.
    `cells` as `too_few_samples`; `steps`: (variant, load label) -> the coarsest step (µs) of its files."""
    def detail(metric: str, _: float) -> str | None:
        coarse = [(c[metric] * 1000.0 / step, c[metric], step, v, s, ld) for v, s, ld, c in cells
                  if (step := steps.get((v, ld))) and isinstance(c.get(metric), (int, float))
                  and 0 < c[metric] * 1000.0 < COARSE_STEPS * step]
        if not coarse:
            return None
        n_steps, value, step, v, s, ld = min(coarse)
        return (f"latencies were recorded in steps of {step / 1000:g} ms, and {len(coarse)} of {len(cells)} "
                f"cells have a {metric} under {COARSE_STEPS} steps, the smallest {_where(v, s, ld)} "
                f"at {value:g} ms ({n_steps:.0f} steps): there it moves in jumps of {100 / n_steps:.0f}%, so its "
                f"differences are rounded to whole steps (its overhead intervals allow for that rounding, so a "
                f"difference of a step can be too noisy to tell). The mean is not rounded this way; a tool that "
                f"records finer times resolves the percentile")

    return _per_percentile("resolution of", percentiles, detail)


# ------------------------------------------------------------- per file: rate, errors, dropped

RATE_TOLERANCE = 0.01          # ±1 % of a requested rate
MAX_ERROR_RATE_PCT = 1.0
SATURATION_SHARE = 0.9         # load generators using >= 90 % of the host's cores


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What one measured file (one repetition of a variant at a load level) says, for the checks below.
    `scenario` is the file's own scenario (hey: one file per scenario); None when the file holds every
    scenario of the load (`scenarios` of them)."""

    variant: str
    scenario: str | None
    load: str                   # the load level's label
    count: int                  # samples of the file (not Transaction Controller rows)
    errors: int
    unanswered: int = 0         # requests sent but absent from the file (hey CSV lists answered ones only)
    arrival_rate: float | None = None   # (n - 1) / (last start - first start), req/s
    scenarios: int = 1
    dropped: int = 0            # k6 arrivals the executor could not start (dropped_iterations)
    latency_step_us: int | None = None  # the step its latencies are recorded in (`latency_step_us`)
    share: int | None = None    # the load generator (0-based) of a run over several (plan `generators`)

    @property
    def who(self) -> str:
        who = self.variant if self.scenario is None else f"{self.variant}/{self.scenario}"
        return who if self.share is None else f"{who} (share {self.share + 1})"


def file_checks(f: FileFacts, requested_rate: float | None, *, rate_tolerance: float = RATE_TOLERANCE,
                max_error_pct: float = MAX_ERROR_RATE_PCT) -> list[Finding]:
    """The file's checks: achieved vs requested rate (per scenario: a file of every scenario is asked
    `scenarios` × the rate), error rate (unanswered requests count as failed), dropped arrivals."""
    out: list[Finding] = []
    if requested_rate:
        per_file = requested_rate * (f.scenarios if f.scenario is None else 1)
        achieved = f.arrival_rate if f.arrival_rate is not None else 0.0
        dev = (achieved - per_file) / per_file
        out.append(Finding(f"rate {f.who}", abs(dev) <= rate_tolerance,
                           f"achieved {achieved:.1f} req/s vs requested {per_file:g} ({dev:+.2%}, "
                           f"tolerance ±{rate_tolerance:.0%})", variant=f.variant, scenario=f.scenario, load=f.load))
    sent = f.count + f.unanswered
    failed = f.errors + f.unanswered
    pct = 100.0 * failed / sent if sent else 100.0
    out.append(Finding(f"errors {f.who}", pct < max_error_pct,
                       f"{failed} of {sent} failed ({pct:.2f}%, limit {max_error_pct:g}%)"
                       + (f"; {f.unanswered} request(s) failed without a response" if f.unanswered else ""),
                       variant=f.variant, scenario=f.scenario, load=f.load))
    if f.dropped:
        out.append(Finding(f"dropped {f.who}", False,
                           f"{f.dropped} arrivals not sent: no virtual user was free (each holds a request in flight; "
                           "raise the load's preallocated_vus to ride out a stall of the target)",
                           variant=f.variant, scenario=f.scenario, load=f.load))
    return out


def load_generator(cpu_s: float, wall_s: float, cores: int, max_cpu_pct: float, *, load: str | None = None,
                   share_limit: float = SATURATION_SHARE) -> Finding:
    """Were the load generators (CPU the runner measured for one step) close to saturating their host?"""
    wall = max(wall_s, 1e-9)
    share = cpu_s / wall / max(cores, 1)
    saturated = share >= share_limit
    return Finding("load generator", not saturated,
                   f"load generators used {cpu_s:.1f} CPU-s in {wall:.1f} s = {share:.0%} of {cores} cores "
                   f"(peak process {max_cpu_pct:.0f}% of one core)"
                   + ("; saturated: results measure the load generator" if saturated else ""), load=load)

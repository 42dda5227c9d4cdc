"""`make bench-ab`: are Benchtrail's latency overhead verdicts honest on autocorrelated load tests?

A seeded simulation of A/B runs the way a load test produces them, pushed through the production
code path: samples -> `ingest.cells.build_cells` (HDR histograms, exact per-repetition statistics,
timelines) -> `ingest.service.combine` (the cell with its `repetitions`, as ingest stores it) ->
`trails.overhead.evidence` / `overhead.ab` (what the run's /overheads and /compare endpoints show).

The model (stated once):
- a repetition is 30,000 requests, 1 ms apart; latency_ms = 10 · exp(0.3 · x_t + o), with x an
  AR(1) process of ρ = 0.9 (stationary, unit variance) within the repetition and o ~ N(0, 0.02²) the
  repetition's own offset (2% run-to-run noise); latencies are recorded in whole µs;
- each experiment has 3 reference repetitions and 3 variant repetitions, interleaved (ABABAB);
- A/A: the variant has the reference's distribution; shifted: every variant latency is 8% higher.
  Each experiment compares the same reference with a fresh A/A variant and a fresh shifted one
  (each rate is still over independent experiments).

Reported (for latency_p75, the product's default metric, in the RESULT line; the other statistics
on the lines above it):
- aa_fpr: share of A/A experiments whose 95% interval excludes 0 (target 5% ± 2);
- power_8pct: share of shifted experiments whose interval excludes 0 on the slower side (≥ 80%);
- ci_coverage_latency: share of all experiments whose interval holds the true difference (0 for
  A/A; 8% of the true reference statistic for shifted; ≥ 93%).
BENCH_SMOKE=1 (bench/sizes.py): 2 experiments of 1,000 samples per repetition; its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats as sps
from scipy.signal import lfilter

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.model import LoadSpec, ParsedFile
from benchtrail.ingest.service import _values_of, combine
from benchtrail.models import Cell
from benchtrail.trails import overhead
from sizes import announce, size

SEED = 20261123
RHO = 0.9
SIGMA = 0.3            # lognormal shape of latency
MEDIAN_MS = 10.0
RUN_SD = 0.02          # run-to-run offset
SAMPLES = size(30_000, smoke=1_000)
EXPERIMENTS = size(400, smoke=2)
REPS = 3
SHIFT = 0.08
METRICS = ("latency_p75", "latency_mean", "latency_p50", "latency_p90", "latency_p99")
PRIMARY = "latency_p75"
LOAD = LoadSpec(kind="threads", value=10.0)


def true_value(metric: str) -> float:
    """The expected per-repetition statistic of the reference (ms): E[exp(o)] · the lognormal's."""
    offset = math.exp(RUN_SD ** 2 / 2)
    if metric == "latency_mean":
        return MEDIAN_MS * math.exp(SIGMA ** 2 / 2) * offset
    q = float(metric.removeprefix("latency_p")) / 100.0
    return MEDIAN_MS * math.exp(SIGMA * float(sps.norm.ppf(q))) * offset


def repetition(rng: np.random.Generator, shift: float, t0_ms: int) -> dict:
    """One repetition's cell part, exactly as ingest builds it from a result file's samples."""
    e = rng.standard_normal(SAMPLES) * math.sqrt(1 - RHO ** 2)
    e[0] = rng.standard_normal()
    x = lfilter([1.0], [1.0, -RHO], e)
    latency_us = np.round(MEDIAN_MS * 1000.0 * np.exp(SIGMA * x + rng.normal(0.0, RUN_SD)) * (1 + shift))
    samples = pl.DataFrame({
        "scenario": ["GET /"] * SAMPLES, "load_key": [LOAD.key] * SAMPLES,
        "start_ms": t0_ms + np.arange(SAMPLES, dtype=np.int64), "latency_us": latency_us.astype(np.int64),
        "success": np.ones(SAMPLES, dtype=bool), "bytes": np.zeros(SAMPLES, dtype=np.int64),
        "is_transaction": np.zeros(SAMPLES, dtype=bool)})
    parsed = ParsedFile(tool="jmeter", format="jmeter-csv", samples=samples, loads={LOAD.key: LOAD})
    cell = next(c for c in build_cells(parsed, with_series=False).cells if c.scenario is not None)
    return _values_of(cell)


def cell_of(parts: list[dict]) -> Cell:
    return Cell(**{"params": {}, "replicates": [], **combine(parts)})


@dataclass
class Tally:
    aa_excl: int = 0
    aa_verdict: int = 0
    power: int = 0
    covered: int = 0
    n_aa: int = 0
    n_shift: int = 0
    paired_power: int = 0
    paired_aa: int = 0


def paired_t_excludes_zero(ref: list[float], var: list[float]) -> bool:
    """For information: the paired t over the same repetitions (not what the product uses with 3 pairs)."""
    return bool(sps.ttest_rel(var, ref).pvalue < 0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=int, default=EXPERIMENTS,
                        help="experiments: each is an A/A and a shifted comparison sharing the reference")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    announce("bench-ab")
    rng = np.random.default_rng(args.seed)
    tallies = {m: Tally() for m in METRICS}
    methods: dict[str, int] = {}
    t_start = time.perf_counter()
    for i in range(args.experiments):
        # interleaved A B A B A B, 40 s apart; the A/A and the shifted variant share the reference
        parts_ref = [repetition(rng, 0.0, 2 * r * 40_000) | {"position": 2 * r} for r in range(REPS)]
        ref_cell = cell_of(parts_ref)
        for shift in (0.0, SHIFT):
            var_cell = cell_of([repetition(rng, shift, (2 * r + 1) * 40_000) | {"position": 2 * r + 1}
                                for r in range(REPS)])
            for m in METRICS:
                res = overhead.ab(overhead.evidence(ref_cell, m), overhead.evidence(var_cell, m), m)
                methods[res.method] = methods.get(res.method, 0) + 1
                t = tallies[m]
                excludes = res.ci_low > 0 or res.ci_high < 0
                truth = shift * true_value(m)
                t.covered += res.ci_low <= truth <= res.ci_high
                paired = paired_t_excludes_zero(list(res.ref_values), list(res.var_values))
                if shift == 0.0:
                    t.n_aa += 1
                    t.aa_excl += excludes
                    t.aa_verdict += res.verdict not in ("no difference", "too noisy to tell")
                    t.paired_aa += paired
                else:
                    t.n_shift += 1
                    t.power += excludes and res.ci_low > 0
                    t.paired_power += paired and float(np.mean(res.var_values)) > float(np.mean(res.ref_values))
        if (i + 1) % 100 == 0:
            print(f"  {i + 1} experiments ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - t_start
    print(f"model: AR(1) rho={RHO} within a repetition, lognormal sigma={SIGMA}, median {MEDIAN_MS} ms, "
          f"run-to-run offset sd {RUN_SD:.0%}, {REPS} repetitions x {SAMPLES} samples per arm, interleaved; "
          f"seed {args.seed}")
    print(f"experiments: {args.experiments} A/A + {args.experiments} shifted by {SHIFT:.0%}; "
          f"methods used: {methods}; {elapsed:.0f} s")
    print(f"{'metric':14s} {'A/A FPR':>8s} {'A/A called':>10s} {'power 8%':>9s} {'coverage':>9s} "
          f"{'paired-t FPR':>13s} {'paired-t power':>15s}")
    for m, t in tallies.items():
        n = t.n_aa + t.n_shift
        print(f"{m:14s} {t.aa_excl / t.n_aa:8.3f} {t.aa_verdict / t.n_aa:10.3f} {t.power / t.n_shift:9.3f} "
              f"{t.covered / n:9.3f} {t.paired_aa / t.n_aa:13.3f} {t.paired_power / t.n_shift:15.3f}")
    p = tallies[PRIMARY]
    aa, power, cover = p.aa_excl / p.n_aa, p.power / p.n_shift, p.covered / (p.n_aa + p.n_shift)
    ok = 0.03 <= aa <= 0.07 and power >= 0.80 and cover >= 0.93
    print(f"targets ({PRIMARY}): A/A FPR 5% ± 2, power >= 80%, coverage >= 93%: {'met' if ok else 'NOT met'}")
    print(f"RESULT aa_fpr={aa:.3f} power_8pct={power:.3f} ci_coverage_latency={cover:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

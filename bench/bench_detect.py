"""`make bench-detect`: evaluate the change-point detector and the A/B interval.

Prints, per TCPD univariate series and on average, F1 (margin 5) and cover as TCPDBench computes them
for: never alerting, apache-otava 0.8.0 at its defaults (run here, in this process), and ours at its
one global setting; then wall times on a 10,000-point trail and the simulation checks. The last line
is machine-readable.

Simulations (seeded, so the numbers are reproducible):
- false alarms: noise-only trails (Gaussian, plus 1% single outliers of 6 sigma), alarms per 1,000 points;
- recall: one step of 2 or 3 sigma at a random place at least 20 points from either end of a 200-point
  trail, found within 5 points;
- CI coverage: A/B cells of 10 repetitions per arm, each repetition's value = true level + run noise,
  the variant's true overhead 5%; share of runs whose 95% interval holds the true overhead.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from otava.analysis import compute_change_points, fill_missing

from benchtrail.analysis.ab import Replicates, compare
from benchtrail.analysis.changepoints import Settings, analyse, detect, detect_incremental
from benchtrail.analysis.scoring import covering, f_measure

DEFAULT_FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "cpd"


def load_tcpd(root: Path) -> list[tuple[str, np.ndarray, dict[str, list[int]]]]:
    annotations = json.loads((root / "tcpd" / "annotations.json").read_text())
    out = []
    for path in sorted((root / "tcpd" / "datasets").glob("*.json")):
        data = json.loads(path.read_text())
        if data["n_dim"] != 1:
            continue
        raw = np.array([np.nan if v is None else v for v in data["series"][0]["raw"]], dtype=np.float64)
        out.append((data["name"], raw, annotations[data["name"]]))
    return out


def otava_defaults(values: np.ndarray) -> list[int]:
    series: list[float | None] = [None if np.isnan(v) else float(v) for v in values]
    fill_missing(series)
    cps, _ = compute_change_points(series)
    return [cp.index for cp in cps]


def ours(values: np.ndarray) -> list[int]:
    return [cp.index for cp in detect(values)]


def score_tcpd(data: list, verbose: bool) -> dict[str, tuple[float, float, float]]:
    methods = {"zero": lambda v: [], "otava": otava_defaults, "ours": ours}
    scores: dict[str, list[tuple[float, float, int]]] = {m: [] for m in methods}
    if verbose:
        print(f"{'dataset':20s} {'n':>5s}  " + "  ".join(f"{m + ' F1':>9s} {m + ' cov':>9s}" for m in methods))
    for name, values, ann in data:
        row = []
        for m, fn in methods.items():
            pred = fn(values)
            f, c = f_measure(ann, pred, margin=5), covering(ann, pred, len(values))
            scores[m].append((f, c, len(pred)))
            row.append(f"{f:9.3f} {c:9.3f}")
        if verbose:
            print(f"{name:20s} {len(values):5d}  " + "  ".join(row))
    return {m: (float(np.mean([s[0] for s in v])), float(np.mean([s[1] for s in v])),
                float(np.mean([s[2] for s in v]))) for m, v in scores.items()}


def timings(seed: int = 7) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    y = 100 + rng.normal(0, 1, 10_000)
    for at in (2_000, 5_000, 8_000):
        y[at:] += 3
    best_full = best_inc = best_otava = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        prev = analyse(y[:-1])
        best_full = min(best_full, time.perf_counter() - t0)
        t0 = time.perf_counter()
        detect_incremental(y, prev, 1)
        best_inc = min(best_inc, time.perf_counter() - t0)
    t0 = time.perf_counter()
    compute_change_points(y.tolist())
    best_otava = time.perf_counter() - t0
    return best_full, best_inc * 1000, best_otava


def false_alarms(trails: int = 100, n: int = 1_000, seed: int = 11) -> float:
    rng = np.random.default_rng(seed)
    alarms = 0
    for _ in range(trails):
        y = 50 + rng.normal(0, 1, n)
        spikes = rng.random(n) < 0.01
        y[spikes] += 6 * rng.choice([-1, 1], spikes.sum())
        alarms += len(detect(y))
    return alarms / (trails * n) * 1000


def recall(k: float, trails: int = 200, n: int = 200, seed: int = 13) -> float:
    rng = np.random.default_rng(seed + int(k * 10))
    hits = 0
    for _ in range(trails):
        y = 50 + rng.normal(0, 1, n)
        at = int(rng.integers(20, n - 20))
        y[at:] += k
        hits += any(abs(cp.index - at) <= 5 for cp in detect(y))
    return hits / trails


def ci_coverage(runs: int = 400, reps: int = 10, seed: int = 17) -> float:
    rng = np.random.default_rng(seed)
    true_ref, overhead = 100.0, 5.0
    covered = 0
    for i in range(runs):
        ref = true_ref + rng.normal(0, 3, reps)
        var = true_ref + overhead + rng.normal(0, 3, reps) * 1.2
        res = compare(Replicates(ref.tolist()), Replicates(var.tolist()), kind="mean", seed=i, n_boot=1000)
        covered += res.ci_low <= overhead <= res.ci_high
    return covered / runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    parser.add_argument("--quiet", action="store_true", help="aggregate lines only")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=RuntimeWarning)

    data = load_tcpd(args.fixtures)
    print(f"TCPD univariate series: {len(data)}; settings: {Settings()}")
    agg = score_tcpd(data, verbose=not args.quiet)
    for m, (f, c, k) in agg.items():
        print(f"{m:6s} F1={f:.3f} cover={c:.3f} change points/series={k:.1f}")
    full_s, inc_ms, otava_s = timings()
    print(f"10,000 points: ours full {full_s:.3f} s, incremental (1 new point) {inc_ms:.1f} ms; "
          f"otava defaults full {otava_s:.3f} s")
    fa = false_alarms()
    r3, r2 = recall(3.0), recall(2.0)
    cov = ci_coverage()
    print(f"noise-only false alarms per 1,000 points: {fa:.3f}; recall 3 sigma {r3:.3f}, 2 sigma {r2:.3f}; "
          f"A/B 95% CI coverage {cov:.3f}")
    f1, cover, _ = agg["ours"]
    targets = {"f1": f1 >= 0.75, "cover": cover >= 0.70, "full_10k_s": full_s <= 0.5,
               "incremental_ms": inc_ms <= 50, "false_alarms_per_1k": fa <= 0.1,
               "recall_3sigma": r3 >= 0.95, "recall_2sigma": r2 >= 0.80, "ci_coverage": cov >= 0.93}
    missed = [k for k, ok in targets.items() if not ok]
    print("targets: " + ("all met" if not missed else "missed " + ", ".join(missed)))
    print(f"RESULT f1={f1:.3f} cover={cover:.3f} full_10k_s={full_s:.3f} incremental_ms={inc_ms:.1f} "
          f"false_alarms_per_1k={fa:.3f} recall_3sigma={r3:.3f} recall_2sigma={r2:.3f} ci_coverage={cov:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

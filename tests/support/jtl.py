"""Deterministic JMeter 5.x JTL files in the EaseAgent report's shape: thread groups 10/20/50 (one
thread group per load level) and two labels, rows in completion order (timestamps unsorted)."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import numpy as np

HEADER = ["timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType",
          "success", "failureMessage", "bytes", "sentBytes", "grpThreads", "allThreads", "URL", "Latency",
          "IdleTime", "Connect"]
LABELS = {"API-URI-owner-3spans": "/api/gateway/owners/2", "API-URI-vets-10spans": "/api/vet/vets"}


def fresh_seed() -> int:
    """A seed no other test uses, for a test that stores raw files and looks at what was written. Raw files
    are content-addressed across every project of a test process's database: a file another test stored
    (the same generator, the same seed) already has its blob row, whichever test ran first on that process,
    and an upload of it writes no object and removes none."""
    return int.from_bytes(os.urandom(4), "big") | (1 << 32)


def write_jtl(path: Path, *, seed: int, slowdown: float = 1.0, per_group: int = 400,
              groups: tuple[int, ...] = (10, 20, 50), error_every: int = 97) -> Path:
    rng = np.random.default_rng(seed)
    rows = []
    t0 = 1_700_000_000_000
    for gi, threads in enumerate(groups):
        start = t0 + gi * 60_000
        for label_i, (label, url) in enumerate(LABELS.items()):
            base = (40 + 30 * label_i) * (1 + threads / 50) * slowdown
            elapsed = np.maximum(1, rng.lognormal(np.log(base), 0.45, per_group)).astype(int)
            starts = start + np.sort(rng.integers(0, 30_000, per_group))
            for i, (ts, el) in enumerate(zip(starts, elapsed)):
                ok = (i % error_every) != 5
                rows.append([int(ts), int(el), label, "200" if ok else "500", "OK" if ok else "Server Error",
                             f"TG {threads} {gi + 1}-{(i % threads) + 1}", "text", "true" if ok else "false",
                             "" if ok else "status 500", 512, 120, threads, threads,
                             f"http://127.0.0.1:8080{url}", max(0, int(el) - 1), 0, 0])
    rows.sort(key=lambda r: r[0] + r[1])  # JMeter writes samples as they complete
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def thread_group_size(thread_name: str) -> int:
    """'TG 50 3-17' -> 50: the size in the thread group's name (grpThreads is the *active* count, which
    is lower during ramp-up and ramp-down, so it cannot identify the group)."""
    group = thread_name.rsplit(" ", 1)[0]
    return int(re.findall(r"\d+", group)[0])


def independent_cells(path: Path) -> dict[tuple[str, int], dict[str, float]]:
    """Per (label, thread-group size): count, errors, mean, p75 and throughput, with csv + numpy only."""
    groups: dict[tuple[str, int], list[tuple[int, int, bool]]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            key = (row["label"], thread_group_size(row["threadName"]))
            groups.setdefault(key, []).append((int(row["timeStamp"]), int(row["elapsed"]), row["success"] == "true"))
    out = {}
    for key, samples in groups.items():
        ts = np.array([s[0] for s in samples], dtype=np.int64)
        el = np.array([s[1] for s in samples], dtype=np.float64)
        out[key] = {
            "count": len(samples),
            "errors": sum(1 for s in samples if not s[2]),
            "latency_mean": float(el.mean()),
            "latency_p75": float(np.percentile(el, 75, method="inverted_cdf")),
            "latency_p99": float(np.percentile(el, 99, method="inverted_cdf")),
            "throughput": len(samples) / (float((ts + el).max() - ts.min()) / 1000.0),
        }
    return out

"""JTL files with known defects for the validity checks: a throughput gap (stall), a 40 ms plateau."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from tests.support.jtl import HEADER

T0 = 1_700_000_000_000   # a whole second (epoch ms): the ingest's 1 s intervals start at T0 + k·1000


def write_rows(path: Path, starts: Sequence[int], elapsed: Sequence[int], *, threads: int = 10,
               label: str = "API-URI-vets-10spans") -> Path:
    rows = []
    for i, (ts, el) in enumerate(zip(starts, elapsed)):
        rows.append([int(ts), int(el), label, "200", "OK", f"TG {threads} 1-{i % threads + 1}", "text", "true", "",
                     512, 120, threads, threads, "http://127.0.0.1:18081/api/vet/vets", max(0, int(el) - 1), 0, 0])
    rows.sort(key=lambda r: r[0] + r[1])
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def stalled_jtl(path: Path, *, gap: tuple[int, int] | None = (8_000, 12_000)) -> Path:
    """20 s of one sample every 5 ms (200 req/s) from T0 + 300 ms; no sample starts in [T0+gap)."""
    starts = [T0 + 300 + 5 * i for i in range(4000)]
    if gap is not None:
        starts = [t for t in starts if not (T0 + gap[0] <= t < T0 + gap[1])]
    return write_rows(path, starts, [2] * len(starts))


def plateau_jtl(path: Path, *, n: int = 1000, fast_every: int = 10) -> Path:
    """Latencies 40..45 ms except every `fast_every`-th sample at 1 ms (the delayed-ACK shape)."""
    starts = [T0 + 300 + 20 * i for i in range(n)]
    elapsed = [1 if i % fast_every == 0 else 40 + i % 6 for i in range(n)]
    return write_rows(path, starts, elapsed)

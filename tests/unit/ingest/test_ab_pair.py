"""A/B pair: baseline.jtl and agent.jtl, each with thread groups of 10/20/50 threads and two
labels, generated here; every per-label, per-thread-group cell (and each group's "all" cell) is
compared with numpy on the generated values. The agent file is slower by construction, so the
comparison also checks that the two files are not mixed up."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import parse_file

from tests.support.oracle import nearest_rank

HEADER = ("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,"
          "failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect")
GROUPS = ((1, 10), (2, 20), (3, 50))
LABELS = ("API-URI-owner-3spans", "API-URI-vets-10spans")


def generate(path: Path, seed: int, slowdown: float) -> dict[tuple[str, int], dict[str, np.ndarray]]:
    """Write a JTL; return the raw values per (label, threads) for the oracle."""
    rng = np.random.default_rng(seed)
    truth: dict[tuple[str, int], dict[str, list]] = {}
    lines = [HEADER]
    t0 = 1_700_000_000_000
    rows = []
    for gnum, threads in GROUPS:
        n = 600 + threads * 10
        start = t0 + (gnum - 1) * 120_000 + np.sort(rng.integers(0, 60_000, n))
        label = rng.integers(0, 2, n)
        elapsed = np.maximum(1, rng.lognormal(np.log(20 * slowdown * (1 + label)), 0.6, n)).astype(int)
        ok = rng.random(n) > 0.02
        thread = rng.integers(1, threads + 1, n)
        for i in range(n):
            lab = LABELS[label[i]]
            d = truth.setdefault((lab, threads), {"start": [], "elapsed": [], "ok": []})
            d["start"].append(start[i])
            d["elapsed"].append(elapsed[i])
            d["ok"].append(ok[i])
            rows.append((start[i] + elapsed[i], f"{start[i]},{elapsed[i]},{lab},{200 if ok[i] else 500},"
                         f"{'OK' if ok[i] else 'Server Error'},Load {threads} {gnum}-{thread[i]},text,"
                         f"{str(ok[i]).lower()},,512,128,{threads},{threads},http://x/,{elapsed[i]},0,0"))
    rows.sort()  # completion order, as JMeter writes: start times are not monotonic
    lines.extend(r[1] for r in rows)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {k: {kk: np.array(vv) for kk, vv in v.items()} for k, v in truth.items()}


def expected(d: dict[str, np.ndarray]) -> dict[str, float]:
    e, s = d["elapsed"], d["start"]
    dur = (np.max(s + e) - np.min(s)) / 1000.0
    return {"count": len(e), "errors": int((~d["ok"]).sum()), "mean": e.sum() / len(e),
            "min": e.min(), "max": e.max(), "duration_s": dur, "throughput": len(e) / dur,
            **{f"p{p}": nearest_rank(e, p) for p in (50, 75, 90, 99)}}


def check(stats: dict[str, float], exp: dict[str, float]) -> None:
    assert stats["count"] == exp["count"]
    assert stats["errors"] == exp["errors"]
    assert stats["latency_mean"] == pytest.approx(exp["mean"], rel=1e-12)
    assert (stats["latency_min"], stats["latency_max"]) == (exp["min"], exp["max"])
    assert stats["duration_s"] == pytest.approx(exp["duration_s"], rel=1e-12)
    assert stats["throughput"] == pytest.approx(exp["throughput"], rel=1e-12)
    for p in (50, 75, 90, 99):
        assert abs(stats[f"latency_p{p}"] - exp[f"p{p}"]) <= exp[f"p{p}"] * 0.001, p


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("ab")
    truth = {"baseline": generate(d / "baseline.jtl", seed=1, slowdown=1.0),
             "agent": generate(d / "agent.jtl", seed=2, slowdown=1.3)}
    return d, truth


@pytest.mark.parametrize("variant", ["baseline", "agent"])
def test_per_label_per_thread_group_cells(pair, variant: str) -> None:
    d, truth = pair
    parsed = parse_file(d / f"{variant}.jtl")
    assert sorted(parsed.loads) == ["threads:10", "threads:20", "threads:50"]
    cells = {(c.scenario, c.load.key): c for c in build_cells(parsed).cells}
    assert len(cells) == 3 * (len(LABELS) + 1)
    for (label, threads), values in truth[variant].items():
        check(cells[(label, f"threads:{threads}")].stats, expected(values))
    for _, threads in GROUPS:
        merged = {k: np.concatenate([truth[variant][(lab, threads)][k] for lab in LABELS])
                  for k in ("start", "elapsed", "ok")}
        check(cells[(None, f"threads:{threads}")].stats, expected(merged))


def test_agent_is_slower_than_baseline_in_every_cell(pair) -> None:
    d, _ = pair
    base = {(c.scenario, c.load.key): c.stats for c in build_cells(parse_file(d / "baseline.jtl")).cells}
    agent = {(c.scenario, c.load.key): c.stats for c in build_cells(parse_file(d / "agent.jtl")).cells}
    assert base.keys() == agent.keys()
    assert all(agent[k]["latency_p75"] > base[k]["latency_p75"] for k in base)

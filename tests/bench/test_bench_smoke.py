"""Every `make bench-*` target, once, in smoke mode: benchmarks that nobody runs rot unseen.

`make bench-<name> BENCH_SMOKE=1` runs the Make target itself (its bootstrap line included, quick once installed)
and the bench's whole path at a tiny size (bench/sizes.py), down to its `RESULT` line. The targets are read from
the Makefile (make's own database), so a new one cannot be left out; its RESULT keys are stated here, one line,
and a target without them fails until they are. The values of a smoke run mean nothing: only that every key is
there, once, with a finite number. Never timings: so a smoke run is no load-timing test and runs beside the
others, not in their group (tests/conftest.py), even where its bench runs a load tool or a browser.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import time
from dataclasses import dataclass

import pytest

from infra.localstack import REPO


@dataclass(frozen=True)
class Bench:
    result: str           # the RESULT keys, in the order the bench prints them

    @property
    def keys(self) -> list[str]:
        return self.result.split()


# The RESULT keys of each `make bench-*` target, in the order it prints them (the README and the manual name them).
BENCHES = {
    "bench-ingest": Bench("ingest_s polars_s ratio peak_rss_mb rss_20m_mb e2e_ratio json_ratio"),
    "bench-detect": Bench("f1 cover full_10k_s incremental_ms false_alarms_per_1k recall_3sigma recall_2sigma ci_coverage "
                          "f1_heldout recall_two_steps false_alarms_ar_per_1k"),
    "bench-ab": Bench("aa_fpr power_8pct ci_coverage_latency"),
    "bench-analysis": Bench("analysis_growth analysis_ms_100 analysis_ms_last review_ms_100 review_ms_last runs"),
    "bench-ui": Bench("ratio initial_js_gz_kb plotly_gz_kb history_5k_ratio history_longest_task_ms"),
    "bench-runner": Bench("ratio rate_error_pct"),
    "bench-api": Bench("run_ratio trail_ratio list_ratio series_ratio overheads_ratio trivial_rps run_p95_ms analysis_growth"),
    "bench-profile": Bench("profiler_overhead_pct attribution_gap_pct profiler_cpu_pct"),
}

# What a bench may take from the environment it is started in; the rest of BENCHTRAIL_* (a test session's database,
# Redis, data folder) and every BENCH_* size override stay out, so each bench starts its own stack at its smoke size.
KEPT = {"BENCHTRAIL_TOOLS_DIR", "BENCHTRAIL_CHROMIUM"}


def make_targets() -> list[str]:
    """The Makefile's `bench-*` targets (not `bench`, which runs them all), as make itself reads them: every target
    counts, however it is written (explicit, static pattern, generated)."""
    database = subprocess.run(["make", "--print-data-base", "--question", "--no-builtin-rules", "--no-builtin-variables",
                               "-f", "Makefile"], cwd=REPO, capture_output=True, text=True).stdout
    lines = database.splitlines()
    found = [m.group(1) for i, line in enumerate(lines)
             if (m := re.match(r"^(bench-[A-Za-z0-9_-]+):", line)) and not (i and lines[i - 1] == "# Not a target:")]
    assert found, "found no bench-* target in the Makefile's database (make --print-data-base)"
    return sorted(set(found))


TARGETS = make_targets()


def smoke_env() -> dict[str, str]:
    """This process's environment without what would point a bench at a test session's stack or resize it, nor
    the make flags of a `make test` above (its jobserver is not ours)."""
    return {k: v for k, v in os.environ.items()
            if not (k.startswith(("BENCHTRAIL_", "BENCH_")) and k not in KEPT) and k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def result_line(output: str) -> dict[str, str]:
    """The bench's last line, `RESULT k=v ...`, as a mapping; fails when it is not last or repeats a key."""
    lines = [line for line in output.splitlines() if line.strip()]
    results = [line for line in lines if line.startswith("RESULT ")]
    assert len(results) == 1, f"expected one RESULT line, found {len(results)}:\n" + "\n".join(lines[-30:])
    assert lines[-1] == results[0], "the RESULT line is not the last line:\n" + "\n".join(lines[-10:])
    pairs = [token.split("=", 1) for token in results[0].split()[1:]]
    assert all(len(p) == 2 and p[0] and p[1] for p in pairs), f"not every field is key=value: {results[0]}"
    keys = [k for k, _ in pairs]
    assert len(set(keys)) == len(keys), f"a key is repeated: {results[0]}"
    return dict(pairs)  # type: ignore[arg-type]


def test_every_target_states_its_keys() -> None:
    """A bench added to the Makefile gets a line in BENCHES here (its RESULT keys), or this fails."""
    missing = [t for t in TARGETS if t not in BENCHES]
    assert not missing, f"add the RESULT keys of {missing} to BENCHES in {__file__}"
    gone = [t for t in BENCHES if t not in TARGETS]
    assert not gone, f"{gone} are no longer make targets: remove them from BENCHES"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("target", TARGETS)
def test_bench_smoke(target: str) -> None:
    bench = BENCHES.get(target)
    if bench is None:
        pytest.fail(f"add the RESULT keys of {target} to BENCHES in {__file__}")
    started = time.monotonic()
    done = subprocess.run(["make", "--no-print-directory", target, "BENCH_SMOKE=1"], cwd=REPO, env=smoke_env(),
                          capture_output=True, text=True, timeout=840)
    elapsed = time.monotonic() - started
    tail = f"\n--- stdout (end) ---\n{done.stdout[-4000:]}\n--- stderr (end) ---\n{done.stderr[-4000:]}"
    assert done.returncode == 0, f"make {target} BENCH_SMOKE=1 exited {done.returncode} after {elapsed:.0f} s{tail}"
    assert "smoke mode (BENCH_SMOKE=1)" in done.stdout, f"{target} did not run in smoke mode{tail}"
    values = result_line(done.stdout)
    assert list(values) == bench.keys, f"{target}: RESULT keys {list(values)}, expected {bench.keys}{tail}"
    for key, value in values.items():
        try:
            number = float(value)
        except ValueError:
            pytest.fail(f"{target}: {key}={value} is not a number")
        assert math.isfinite(number), f"{target}: {key}={value} is not finite"

"""Benchmark sizes: full by default, tiny in smoke mode (BENCH_SMOKE=1).

`make test` runs every `make bench-*` target once with BENCH_SMOKE=1 (tests/bench/test_bench_smoke.py): the
bench's whole path at a tiny size, in seconds, down to its RESULT line with every key. The numbers of a smoke
run mean nothing; it checks that the path still runs and the keys are all there, never the timings.

A bench states each size once, `ROWS = size(1_000_000, smoke=5_000)`, and imports this module by name (a script
run as `python bench/x.py` has bench/ on its path). frontend/scripts/bench-ui.mjs reads BENCH_SMOKE the same way.
"""

from __future__ import annotations

import os
from typing import TypeVar

T = TypeVar("T", int, float)

SMOKE = os.environ.get("BENCH_SMOKE", "") not in ("", "0")


# The environment of a production API server (`benchtrail-api`) a bench starts: one process in smoke mode (each
# costs a start of its own), else its default, one per core.
API_ENV = {"BENCHTRAIL_API_WORKERS": "1"} if SMOKE else {}


def size(full: T, smoke: T, env: str | None = None) -> T:
    """`full`, or `smoke` under BENCH_SMOKE=1; the environment variable `env`, when set, overrides both."""
    if env and os.environ.get(env):
        return type(full)(os.environ[env])
    return smoke if SMOKE else full


def announce(name: str) -> None:
    """Says, first thing, that a smoke run's numbers are not measurements."""
    if SMOKE:
        print(f"{name}: smoke mode (BENCH_SMOKE=1): the whole path at a tiny size; its numbers mean nothing",
              flush=True)

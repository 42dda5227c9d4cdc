"""The Playwright end-to-end suite (tests/e2e/*.spec.ts, Debian's Chromium) as `make test-e2e` runs it: a throw-away
stack with the recorded demo, the built dashboard, every spec. `make test` runs it here, as one test beside the
others rather than after them (it measures no timing), first in the heavy group: the timing tests follow it in the
same test process, so that they never run beside it (tests/conftest.py).

Its output goes to artifacts/logs/e2e.log; a failure shows the specs that failed and the log's end."""

from __future__ import annotations

import os
import subprocess

import pytest

from infra.localstack import REPO

pytestmark = [pytest.mark.xdist_group("heavy"), pytest.mark.timeout(1800)]

# What the suite takes from this process's environment: the tools and the browser, not the test session's stack.
KEPT = {"BENCHTRAIL_TOOLS_DIR", "BENCHTRAIL_CHROMIUM"}


def test_playwright_suite() -> None:
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("BENCHTRAIL_") and k not in KEPT) and k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    log = REPO / "artifacts" / "logs" / "e2e.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        done = subprocess.run(["make", "--no-print-directory", "test-e2e"], cwd=REPO, env=env, stdout=out,
                              stderr=subprocess.STDOUT, timeout=1700)
    text = log.read_text(errors="replace")
    failed = [line.strip() for line in text.splitlines() if line.lstrip().startswith(("✘", "×"))]
    assert done.returncode == 0, (f"make test-e2e exited {done.returncode}; failed specs:\n" + "\n".join(failed)
                                  + f"\n--- the end of {log}:\n" + text[-6000:])
    assert " passed (" in text and not failed, text[-3000:]

"""The environment of the processes a test starts (API, workers, runners, beat) on the test session's stack."""

from __future__ import annotations

import os
from pathlib import Path

from infra.localstack import REPO

TOOLS = Path(os.environ.get("BENCHTRAIL_TOOLS_DIR", REPO / ".tools"))
# The test process's long-lived runner (tests/integration/conftest.py `shared_runner`): its name on the runs it
# executes, and the pool it serves between tests (no plan names it).
SHARED_RUNNER = "runner-shared"
SHARED_RUNNER_IDLE_POOL = "shared-idle"


def stack_env(infra: dict[str, str], **extra: str) -> dict[str, str]:
    """This process's environment with the session's BENCHTRAIL_* settings, `extra`, and the tools on PATH."""
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")}, **extra}
    env["PATH"] = f"{TOOLS / 'bin'}:{env.get('PATH', '')}"
    return env

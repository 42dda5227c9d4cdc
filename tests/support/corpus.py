"""Paths to the shared real-tool fixtures and to our own small ones.

The real corpus lives beside the repository (`<repo>/../shared/fixtures/real`), locally and in CI;
BENCHTRAIL_SHARED_DIR says where shared/ is when it is not there (a git worktree).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infra.localstack import REPO

SHARED = Path(os.environ.get("BENCHTRAIL_SHARED_DIR") or REPO.parent / "shared")
REAL = SHARED / "fixtures" / "real"
LOCAL = REPO / "tests" / "fixtures"


def real(relative: str) -> Path:
    path = REAL / relative
    if not path.exists():
        pytest.fail(f"shared fixture corpus not found at {REAL}: clone the repo with shared/ beside it")
    return path

"""Paths to the shared real-tool fixtures and to our own small ones.

The real corpus lives beside the repository (`<repo>/../shared/fixtures/real`), locally and in CI.
"""

from __future__ import annotations

import pytest

from infra.localstack import REPO

REAL = REPO.parent / "shared" / "fixtures" / "real"
LOCAL = REPO / "tests" / "fixtures"


def real(relative: str):  # type: ignore[no-untyped-def]
    path = REAL / relative
    if not path.exists():
        pytest.fail(f"shared fixture corpus not found at {REAL}: clone the repo with shared/ beside it")
    return path

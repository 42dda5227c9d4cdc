"""Paths to the shared real-tool fixtures and to our own small ones, plus a JTL writer.

The real corpus lives beside the repository (`<repo>/../shared/fixtures/real`), locally and in CI.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
# BENCHTRAIL_SHARED_DIR: where shared/ is when it is not beside the repository (a git worktree).
REAL = Path(os.environ.get("BENCHTRAIL_SHARED_DIR") or REPO.parent / "shared") / "fixtures" / "real"
LOCAL = REPO / "tests" / "fixtures"


def real(relative: str) -> Path:
    path = REAL / relative
    if not path.exists():
        pytest.fail(f"shared fixture corpus not found at {REAL}: clone the repo with shared/ beside it")
    return path


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text_or_bytes) -> path of a file in a fresh temp dir."""
    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8", newline="")
        else:
            path.write_bytes(content)
        return path
    return _write

"""Fixtures of the ingest tests: a writer of small files in a fresh folder."""

from __future__ import annotations

from pathlib import Path

import pytest


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

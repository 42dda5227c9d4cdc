"""Raw files, content-addressed on disk under BENCHTRAIL_DATA_DIR/blobs. Blobs are immutable and
kept forever so any cell can be recomputed from what was uploaded."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from benchtrail.config import get_settings

CHUNK = 1 << 20


def blob_path(sha256: str) -> Path:
    return get_settings().blob_dir / sha256[:2] / sha256


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def put(path: Path, sha256: str) -> tuple[Path, bool]:
    """Put a fully written temp file, never written again, into the store. Returns (path, created).
    A hard link when the temp file is on the same file system (a 1 GB JTL is not copied again)."""
    target = blob_path(sha256)
    if target.exists():
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    tmp.unlink(missing_ok=True)
    try:
        os.link(path, tmp)
    except OSError:
        shutil.copyfile(path, tmp)
    os.replace(tmp, target)
    return target, True

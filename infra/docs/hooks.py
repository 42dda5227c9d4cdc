"""MkDocs hook (mkdocs.yml `hooks:`): adds the generated reference pages (infra/docs/reference.py) to the
build, in memory; nothing generated is written into docs/."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "backend", REPO / "worker", REPO / "worker" / "runner"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from infra.docs.reference import pages  # noqa: E402


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for src_uri, content in pages().items():
        files.append(File.generated(config, src_uri, content=content))
    return files

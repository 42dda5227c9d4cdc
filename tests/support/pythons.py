"""The Python interpreters on this machine, for the tests that run the one-file client on each: pyenv's
versions (the machine image has 3.9 to 3.13), Debian's, and the one the tests run on; and a fresh process of the
tests' own interpreter, for the tests of what a process loads at its start."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

CANDIDATES = ("~/.pyenv/versions/*/bin/python3", "/usr/bin/python3.*", "/usr/local/bin/python3.*")


@functools.cache
def interpreters() -> dict[tuple[int, int], Path]:
    """(major, minor) -> an interpreter of that version, for every CPython 3.9 or newer found."""
    found: dict[tuple[int, int], Path] = {}
    paths = [Path(sys.base_prefix) / "bin" / "python3"]
    for pattern in CANDIDATES:
        base = Path(pattern).expanduser()
        paths += sorted(Path(base.anchor).glob(str(base.relative_to(base.anchor))))
    for path in paths:
        if not path.is_file() or path.name.endswith("-config"):
            continue
        done = subprocess.run([str(path), "-I", "-c", "import sys; print(*sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            continue
        major, minor = map(int, done.stdout.split())
        if (major, minor) >= (3, 9):
            found.setdefault((major, minor), path)
    return dict(sorted(found.items()))


def oldest() -> tuple[tuple[int, int], Path]:
    return next(iter(interpreters().items()))


def newest() -> tuple[tuple[int, int], Path]:
    return list(interpreters().items())[-1]


def fresh_process_output(code: str) -> str:
    """What `code` prints, run by this interpreter in a process of its own (a fresh start: nothing imported yet),
    its log lines plain text."""
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, "BENCHTRAIL_LOG_JSON": "false"},
                          capture_output=True, text=True, check=True).stdout

"""What the install (infra/scripts/bootstrap.sh) leaves behind for every process that starts later."""

from __future__ import annotations

import importlib.util
import sysconfig
from pathlib import Path

from tests.support.pythons import fresh_process_output

# `benchtrail upload` in CI, each API and Celery worker: their imports must not be compiled again at
# every start (uv does not compile by default; with PYTHONDONTWRITEBYTECODE nothing is ever cached):
# 0.3 s of the CLI's 0.5 s start was `compile`.
STARTS = ("benchtrail.cli.main", "benchtrail.serve", "benchtrail_worker.app", "benchtrail_worker.beat")


def _stale_bytecode(module: str) -> list[str]:
    """The installed (site-packages) modules that importing `module` loads from source files whose
    cached bytecode is missing or older than the source."""
    code = f"import sys, {module}\nprint('\\n'.join(m.__file__ for m in list(sys.modules.values()) " \
           "if getattr(m, '__file__', None)))"
    files = fresh_process_output(code).split()
    site = Path(sysconfig.get_paths()["purelib"])
    stale = []
    for name in files:
        source = Path(name)
        if source.suffix != ".py" or site not in source.parents:
            continue
        cached = Path(importlib.util.cache_from_source(str(source)))
        # A timestamp pyc's header: magic, flags, then the source's mtime and size it was compiled from.
        header = cached.read_bytes()[:16] if cached.exists() else b""
        st = source.stat()
        if len(header) < 16 or int.from_bytes(header[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF \
                or int.from_bytes(header[12:16], "little") != st.st_size & 0xFFFFFFFF:
            stale.append(str(source.relative_to(site)))
    return stale


def test_the_installed_packages_are_compiled_to_bytecode_once_at_install():
    for module in STARTS:
        stale = _stale_bytecode(module)
        assert not stale, f"{module} imports {len(stale)} module(s) without cached bytecode: {stale[:5]}"

"""What each worker process of `benchtrail-api` does once its app is built (benchtrail/serve.py)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_a_worker_freezes_what_it_built_out_of_the_collectors_generations():
    """In a process of its own (freezing is for the life of the process): the app built by
    `worker_app`, its modules, routes, schemas and mappers are frozen: over 100,000 objects that
    full collections no longer walk (228,068 measured)."""
    code = ("import gc\nfrom benchtrail.serve import worker_app\nbefore = gc.get_freeze_count()\n"
            "worker_app()\nprint(before, gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "BENCHTRAIL_LOG_JSON": "false"},
                         capture_output=True, text=True, check=True).stdout.split()
    before, after = int(out[-2]), int(out[-1])
    assert before == 0
    assert after > 100_000, after

"""`benchtrail-api`: the production API server: uvicorn (uvloop + httptools) with one worker
process per core, so requests are served in parallel on every core. The same command is used by
`make up`, the Docker image and the benchmarks, so what is measured is what users run."""

from __future__ import annotations

import argparse
import os

import uvicorn


def default_workers() -> int:
    """BENCHTRAIL_API_WORKERS, else one per core the process may use."""
    configured = os.environ.get("BENCHTRAIL_API_WORKERS")
    if configured:
        return max(1, int(configured))
    return max(1, len(os.sched_getaffinity(0)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="benchtrail-api", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8400)
    parser.add_argument("--workers", type=int, default=None, help="default: BENCHTRAIL_API_WORKERS or one per core")
    args = parser.parse_args(argv)
    # Imported here, not at the top: each worker process is spawned by re-importing this module and
    # must answer uvicorn's health ping within 5 s, even on a loaded machine.
    from benchtrail import logging as applog
    from benchtrail.config import get_settings

    # uvicorn's own logging config would print the process manager's lines as plain text: the same
    # JSON handler as the app instead (log_config=None leaves logging to us, in every process).
    applog.configure(json=get_settings().log_json)
    from benchtrail.storage import temp_files_on_data_disk

    temp_files_on_data_disk()   # before the worker processes start: they inherit it
    uvicorn.run("benchtrail.app:create_app", factory=True, host=args.host, port=args.port,
                workers=args.workers or default_workers(), access_log=False, proxy_headers=False,
                timeout_graceful_shutdown=10, log_config=None)


if __name__ == "__main__":
    main()

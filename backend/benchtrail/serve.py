"""`benchtrail-api`: the production API server: uvicorn (uvloop + httptools) with one worker
process per core, so requests are served in parallel on every core. The same command is used by
`make up`, the Docker image and the benchmarks, so what is measured is what users run.

Each worker process listens on its own socket bound with SO_REUSEPORT, and the kernel spreads new
connections over them by a hash of their addresses. uvicorn's default, one socket shared by all
workers, lets the worker that wakes first accept every connection waiting: a burst of keep-alive
connections (a proxy's pool, a load test, a dashboard's parallel reads) can all land on one process
while the other cores idle. Measured with wrk (32 connections, 2 workers on 2 cores, one cached read):
2 of 10 runs served ~1,000 req/s from one busy process instead of ~1,900 from both; with a socket
per worker, 8 of 8 runs served 1,890-2,180 req/s. A worker that dies takes the connections still
waiting in its queue with it (reset; clients retry); its replacement listens again."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import socket
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI


def default_workers() -> int:
    """BENCHTRAIL_API_WORKERS, else one per core the process may use."""
    from benchtrail.config import Settings

    configured = Settings().api_workers   # not get_settings(): its cache must see BENCHTRAIL_API_PROCESSES, set below
    if configured:
        return configured
    return max(1, len(os.sched_getaffinity(0)))


def worker_app() -> FastAPI:
    """The app as each worker process builds it. What is built by then (modules, routes, schemas,
    mappers) lives as long as the process: frozen out of the collector's generations, so that the
    full collections requests' allocations set off no longer walk it. Measured on the run document,
    16 connections: p99 80-112 ms before, 16-35 ms frozen; p95 16-22 ms before, 11-15 ms frozen."""
    from benchtrail.app import create_app

    app = create_app()
    gc.collect()
    gc.freeze()
    return app


class OwnListener:
    """Stands in, in uvicorn's process manager, for the socket it hands to every worker it starts or
    restarts (pickled to the new process): it arrives there as a new listening socket of that
    worker's own, bound to `address` with SO_REUSEPORT."""

    def __init__(self, family: socket.AddressFamily, address: tuple[str, int]) -> None:
        self.family = family
        self.address = address

    def __reduce__(self) -> tuple[object, tuple[socket.AddressFamily, tuple[str, int]]]:
        return bind_reuseport, (self.family, self.address)


def bind_reuseport(family: socket.AddressFamily, address: tuple[str, int]) -> socket.socket:
    from uvicorn.config import STARTUP_FAILURE

    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        logging.getLogger("uvicorn.error").error("cannot listen on %s: %s", address, exc)
        sys.exit(STARTUP_FAILURE)
    return sock


def _log_connections(workers: int) -> None:
    """What the worker processes may hold of the database's connections, said once at startup; a warning
    when that is more than the database lets this role open (the worker and beat need some as well)."""
    from benchtrail.db import connection_limit, connection_share
    from benchtrail.logging import log

    per_process = connection_share().total
    most = per_process * workers
    allowed = connection_limit()
    fields = dict(processes=workers, per_process=per_process, at_most=most, database_allows=allowed)
    if allowed is not None and most > allowed:
        log.warning("the API may open more database connections than the database allows: raise its "
                    "max_connections (or the role's connection limit) or lower BENCHTRAIL_API_DB_CONNECTIONS", **fields)
    else:
        log.info("database connections", **fields)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="benchtrail-api", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8400)
    parser.add_argument("--workers", type=int, default=None, help="default: BENCHTRAIL_API_WORKERS or one per core")
    args = parser.parse_args(argv)
    workers = args.workers or default_workers()
    # Before the settings are first read, here and in the worker processes (which inherit it): they share
    # the API's database connections (db.connection_share).
    os.environ["BENCHTRAIL_API_PROCESSES"] = str(workers)
    # Imported here, not at the top: each worker process is spawned by re-importing this module and
    # must answer uvicorn's health ping within 5 s, even on a loaded machine.
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from benchtrail import logging as applog
    from benchtrail.config import get_settings

    # uvicorn's own logging config would print the process manager's lines as plain text: the same
    # JSON handler as the app instead (log_config=None leaves logging to us, in every process).
    applog.configure(json=get_settings().log_json)
    from benchtrail.storage import temp_files_on_data_disk

    temp_files_on_data_disk()   # before the worker processes start: they inherit it
    _log_connections(workers)
    options: dict[str, Any] = dict(factory=True, host=args.host, port=args.port, workers=workers, access_log=False,
                                   proxy_headers=False, timeout_graceful_shutdown=10, log_config=None)
    if options["workers"] == 1:
        uvicorn.run("benchtrail.serve:worker_app", **options)
        return
    config = uvicorn.Config("benchtrail.serve:worker_app", **options)
    # Bound without SO_REUSEPORT first, to fail at once, as uvicorn would, when anything else listens
    # there: sockets with SO_REUSEPORT of the same user would otherwise share the port with it silently.
    probe = config.bind_socket()
    family, address = probe.family, probe.getsockname()[:2]
    probe.close()
    Multiprocess(config, sockets=[OwnListener(family, address)]).run()  # type: ignore[list-item]


if __name__ == "__main__":
    main()

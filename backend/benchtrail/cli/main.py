"""`benchtrail`: the server package's command. Every user command (upload, compare, show, run, ...) is the
client's (`benchtrail.cli.client`, the one file the server serves at /cli/benchtrail.py for CI jobs), run here
in the same process: one implementation. `benchtrail admin ...` (`benchtrail.cli.admin`) works on the server
host, on the database and raw files. Exit codes: the client's docstring, and `benchtrail.cli.admin`'s.
"""

from __future__ import annotations

import os
import sys

from benchtrail.cli.client import main as client_main

ADMIN_HINT = "On the server host: benchtrail admin --help (create projects and tokens, measure runs again)."


def main() -> None:
    os.environ.setdefault("BENCHTRAIL_LOG_JSON", "false")
    argv = sys.argv[1:]
    if argv[:1] == ["admin"]:
        from benchtrail.cli.admin import admin_app   # typer and the server's modules: only here

        admin_app(args=argv[1:], prog_name="benchtrail admin")
    sys.exit(client_main(argv, prog="benchtrail", epilog=ADMIN_HINT))


if __name__ == "__main__":
    main()

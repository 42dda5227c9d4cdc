"""The compose stack's `migrate` service, run before the API, the worker, beat and the runner start:

1. the database schema up to this release's newest migration (`alembic upgrade head`; a database made by an
   earlier release is upgraded in place, nothing else is touched);
2. with --runner-token-file FILE: a runner token for the stack's own runner (pools --runner-pools), kept in FILE
   (mode 0400). The kept token is used again while the database knows it (and it is not revoked); otherwise a new
   one is made (a new database volume, or a revoked token).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[2]


def migrate() -> None:
    from alembic import command
    from alembic.config import Config

    command.upgrade(Config(str(APP / "alembic.ini")), "head")


def runner_token(path: Path, pools: list[str]) -> str:
    """'kept' or 'created': the token in `path` is one the database accepts as a runner's afterwards."""
    from sqlalchemy import select

    from benchtrail.auth.tokens import hash_token
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models.project import ApiToken
    from benchtrail.projects.service import create_token

    kept = path.read_text().strip() if path.exists() else ""
    with unit_of_work() as session:
        if kept and session.scalar(select(ApiToken.id).where(
                ApiToken.token_hash == hash_token(kept), ApiToken.role == "runner", ApiToken.revoked_at.is_(None))):
            return "kept"
        created = create_token(session, project=None, name="compose-runner", role="runner", pools=pools)
        # Written before the token's row commits: a crash in between leaves a file the database does not know,
        # which the next start replaces (never a committed token nobody has).
        tmp = path.with_name(path.name + ".new")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o400)
        with os.fdopen(fd, "w") as fh:
            fh.write(created.token + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return "created"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runner-token-file", type=Path, help="where the stack's runner finds its token")
    parser.add_argument("--runner-pools", default="local", help="pools the runner token may claim (comma-separated)")
    args = parser.parse_args(argv)
    migrate()
    print("stack-init: database schema at the newest migration", flush=True)
    if args.runner_token_file:
        pools = [p.strip() for p in args.runner_pools.split(",") if p.strip()]
        outcome = runner_token(args.runner_token_file, pools)
        print(f"stack-init: runner token {outcome} ({args.runner_token_file}, pools {','.join(pools)})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Taking the test session's throw-away PostgreSQL down and up again (the `infra` fixture's cluster)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator

from infra.localstack import REPO

POSTGRES_SH = str(REPO / "infra/scripts/postgres.sh")


@contextlib.contextmanager
def postgres_down(infra: dict[str, str]) -> Iterator[None]:
    subprocess.run([POSTGRES_SH, "stop", infra["_pg_dir"], infra["_pg_port"]], check=True)
    try:
        yield
    finally:
        start_postgres(infra)


def start_postgres(infra: dict[str, str]) -> None:
    subprocess.run([POSTGRES_SH, "start", infra["_pg_dir"], infra["_pg_port"]], check=True)

"""`make up` for anyone, from any folder, and over an earlier release's database.

The project lies in a folder only its owner can enter (mode 700, as root's home and Debian's user homes are)
under a path with spaces. `make restore` of an earlier release's backup (tests/support/upgrade.py) puts that
release's database in place; `make up` (`stack.py up`, what it runs once the install step is done; no demo
data) brings the product up on it: its PostgreSQL cluster where the postgres user can reach it, durable and
closed by passwords, the database backed up and then upgraded by the migrations, every old run answering as
it did; no permission above the project changes. Then `make down`. Ports of its own, so it runs beside the
other tests."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import tarfile
import urllib.request
from pathlib import Path

import psycopg
import pytest

from infra.localstack import REPO, free_port
from tests.support import upgrade

STACK_FILES = ("infra", "migrations", "alembic.ini", "Makefile")


def _state(paths: list[Path]) -> dict[Path, tuple[int, int, int]]:
    return {p: (stat.S_IMODE(p.stat().st_mode), p.stat().st_uid, p.stat().st_gid) for p in paths}


def _project_copy(home: Path) -> Path:
    """The project's files that `stack.py up` reads, in `home`; the installed environment is the repository's."""
    project = home / "my projects" / "bench trail"
    project.mkdir(parents=True)
    for name in STACK_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, project / name)
    (project / ".venv").symlink_to(REPO / ".venv")
    return project


def _head() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    return str(ScriptDirectory.from_config(Config(str(REPO / "alembic.ini"))).get_current_head())


@pytest.mark.timeout(420)
def test_make_up_from_a_closed_folder_with_spaces_upgrades_an_older_database(tmp_path: Path) -> None:
    home = tmp_path / "closed home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    project = _project_copy(home)
    ports = {"BENCHTRAIL_PORT": free_port(), "BENCHTRAIL_PG_PORT": free_port(), "BENCHTRAIL_REDIS_PORT": free_port()}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHTRAIL_", "PG"))}
    env.update({k: str(v) for k, v in ports.items()})
    env["DEMO_RUN_DIR"] = str(tmp_path / "demo-run")   # `make down` stops the demo services recorded there only
    as_root = os.geteuid() == 0
    var_dir = Path("/var/lib/benchtrail")
    var_existed = var_dir.exists()
    watched = [p for p in (home, *home.parents) if p != Path("/")] + [Path("/var/lib")]
    before = _state(watched)
    python = str(project / ".venv" / "bin" / "python")

    def make(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["make", "--no-print-directory", *args], cwd=project, env=env, capture_output=True,
                              text=True, timeout=300)

    try:
        # The earlier release's database, as `make restore` puts it in place (nothing was running: not upgraded).
        done = make("restore", f"FILE={upgrade.ARCHIVE}")
        assert done.returncode == 0, done.stdout + done.stderr
        secrets = project / ".data" / "stack" / "secrets"
        password = (secrets / "postgres-benchtrail-password").read_text().strip()

        def connect(**kw: str) -> psycopg.Connection:
            return psycopg.connect(host="127.0.0.1", port=ports["BENCHTRAIL_PG_PORT"], user="benchtrail",
                                   dbname="benchtrail", connect_timeout=5, **kw)

        with connect(password=password) as c:
            assert c.execute("SELECT version_num FROM alembic_version").fetchone() == (upgrade.MIGRATION,)

        # `make up` (after its install step).
        done = subprocess.run([python, "infra/scripts/stack.py", "up", "--no-demo"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"at migration {upgrade.MIGRATION}, this release's is {_head()}: backing it up first" in done.stdout

        # Where the cluster lives: as root, the product's data folder, owned by postgres; the project links to it.
        cluster = project / ".data" / "stack" / "pg"
        if as_root:
            import pwd

            assert cluster.is_symlink()
            target = cluster.resolve()
            assert target.parent.parent == var_dir and target.name == "postgres", target
            assert target.stat().st_uid == pwd.getpwnam("postgres").pw_uid
            assert stat.S_IMODE(target.stat().st_mode) == 0o700
            assert stat.S_IMODE(var_dir.stat().st_mode) == 0o755
        else:
            assert cluster.is_dir() and not cluster.is_symlink()
        assert f"PostgreSQL cluster: {cluster.resolve()}" in done.stdout

        # Durable, and closed: no connection without the password, nor with a wrong one.
        with connect(password=password) as c:
            settings = {name: c.execute(f"SHOW {name}").fetchone()[0]
                        for name in ("fsync", "synchronous_commit", "full_page_writes")}
            assert c.execute("SELECT version_num FROM alembic_version").fetchone() == (_head(),)
        assert settings == {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
        with pytest.raises(psycopg.OperationalError, match="no password supplied"):
            connect().close()
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            connect(password="not-the-password").close()

        # The database as the earlier release left it was backed up before the migrations ran.
        [backup] = (project / ".data" / "backups").glob(f"before-upgrade-{upgrade.MIGRATION}-*.tar")
        with tarfile.open(backup) as tar:
            manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
            assert "left in place" in manifest["blobs_in"] and manifest["blobs"] == []
            dump = tmp_path / "before.dump"
            dump.write_bytes(tar.extractfile("database.dump").read())  # type: ignore[union-attr]
        listed = subprocess.run(["pg_restore", "--data-only", "--table=alembic_version", "-f", "-", str(dump)],
                                capture_output=True, text=True, check=True).stdout
        assert f"\n{upgrade.MIGRATION}\n" in listed

        # Every old run opens and answers as it did before the upgrade (the old admin token still works).
        url = f"http://127.0.0.1:{ports['BENCHTRAIL_PORT']}"
        with urllib.request.urlopen(f"{url}/api/health", timeout=10) as r:
            assert r.status == 200
        assert upgrade.assert_unchanged(url) == len(upgrade.expected()["runs"]) == 14

        # Nothing above the project changed permissions or owner.
        assert _state(watched) == before
    finally:
        down = make("down")
        if as_root and (project / ".data" / "stack" / "pg").is_symlink():
            shutil.rmtree((project / ".data" / "stack" / "pg").resolve().parent, ignore_errors=True)
            if not var_existed:
                try:
                    var_dir.rmdir()   # only if empty: another install may live there meanwhile
                except OSError:
                    pass
    assert down.returncode == 0, down.stdout + down.stderr
    for port in ports.values():   # API, PostgreSQL and Redis stopped
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()

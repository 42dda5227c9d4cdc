"""Start and stop the whole Benchtrail stack as local processes (no Docker needed).

  stack.py up          PostgreSQL + Redis (unless BENCHTRAIL_DATABASE_URL / BENCHTRAIL_REDIS_URL are set),
                       migrations (after a backup of the database when they upgrade it), API (serving
                       frontend/dist), worker, beat, a runner; the recorded demo data, then the URL and token;
                       the live demo goes on in the background (infra/scripts/demo.py).
  stack.py down        stop everything `up` started.
  stack.py backup [FILE] / restore FILE
                       database (pg_dump custom format) + raw uploads in one archive (infra/scripts/backup.py).
  stack.py ephemeral -- CMD...
                       a throw-away stack on free ports in a temp dir; runs CMD with BENCHTRAIL_E2E_URL and
                       BENCHTRAIL_E2E_ADMIN_TOKEN set, tears everything down, exits with CMD's status;
                       --demo loads the recorded demo first.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".venv" / "bin"
sys.path.insert(0, str(REPO))

from benchtrail_runner.process import session_priority  # noqa: E402
from infra import localstack  # noqa: E402  (needs the repository root on sys.path)


def log(msg: str) -> None:
    print(f"stack: {msg}", flush=True)


# As root, `make up` keeps its PostgreSQL cluster here (one folder per project folder), owned by the postgres
# user: PostgreSQL refuses to run as root, and `postgres` cannot enter root's home (mode 700) or a user's.
VAR_DIR = Path(os.environ.get("BENCHTRAIL_VAR_DIR", "/var/lib/benchtrail"))


def instance_name(project: Path) -> str:
    """The product data folder's name for one project folder: readable, and unique to its path."""
    project = project.resolve()
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "-", project.name).strip("-.")[:40] or "benchtrail"
    return f"{readable}-{hashlib.sha256(str(project).encode()).hexdigest()[:12]}"


def cluster_dir(state: Path, project: Path, create: bool) -> Path:
    """Where `make up`'s PostgreSQL cluster lives: `state/pg`. Run as a user, that is the folder itself (PostgreSQL
    runs as that user, who can enter their own folders). Run as root, `state/pg` is a link to
    VAR_DIR/<instance>/postgres, which the postgres user can reach from any project folder (a 700 home, a path
    with spaces) without a permission above the project being changed; `create` makes it. A cluster an earlier
    `make up` made in `state/pg` itself stays where it is."""
    link = state / "pg"
    if not create or os.geteuid() != 0:
        return link
    if link.is_dir() and not link.is_symlink() and not (link / "data" / "PG_VERSION").exists():
        shutil.rmtree(link)   # left by a `make up` that stopped before making a cluster there (postgres could not reach it)
    if link.exists() or link.is_symlink():
        return link
    home = VAR_DIR / instance_name(project)
    for folder in (VAR_DIR, home):   # the product's own data folder: root's, and open to pass through
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o755)
    (home / "PROJECT").write_text(f"The PostgreSQL cluster of `make up` in {project.resolve()}\n")
    state.mkdir(parents=True, exist_ok=True)
    link.symlink_to(home / "postgres")
    return link


def redis_quoted(value: str) -> str:
    """A redis.conf argument that may hold spaces."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _reaped(pid: int) -> bool:
    """True when `pid` is a child of this process that has exited (now reaped); False for a live child or a
    process that is not ours (one an earlier `make up` started)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == pid


class Stack:
    def __init__(self, state: Path, *, api_port: int, pg_port: int, redis_port: int, fast: bool = False,
                 pg_dir: Path | None = None) -> None:
        self.state = state
        self.pg_dir = pg_dir or state / "pg"
        self.run_dir = state / "run"
        self.logs = state / "logs"
        # Generated passwords, one per file (mode 600) in a folder only the owner can enter.
        self.secrets = state / "secrets"
        self.api_port = api_port
        self.pg_port = pg_port
        self.redis_port = redis_port
        # fast: a throw-away stack (e2e, benchmarks) with the test harness's unsafe PostgreSQL settings
        # and no passwords. `make up` is never fast: durable, passwords on PostgreSQL and Redis.
        self.fast = fast
        self.external_db = os.environ.get("BENCHTRAIL_DATABASE_URL")
        self.external_redis = os.environ.get("BENCHTRAIL_REDIS_URL")

    def _secret(self, name: str) -> str:
        """The password in secrets/NAME, or "" before the first `up` generated it (e.g. `make down`)."""
        path = self.secrets / name
        return path.read_text().strip() if path.exists() else ""

    def _ensure_secret(self, name: str) -> str:
        """A random password kept in secrets/NAME (mode 600), generated once."""
        import secrets as _secrets

        self.secrets.mkdir(parents=True, exist_ok=True)
        self.secrets.chmod(0o700)
        path = self.secrets / name
        if not path.exists() or not path.read_text().strip():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(_secrets.token_hex(32))
        path.chmod(0o600)
        return path.read_text().strip()

    @property
    def database_url(self) -> str:
        if self.external_db:
            return self.external_db
        password = "" if self.fast else self._secret("postgres-benchtrail-password")
        user = f"benchtrail:{password}" if password else "benchtrail"
        return f"postgresql+psycopg://{user}@127.0.0.1:{self.pg_port}/benchtrail"

    @property
    def redis_url(self) -> str:
        if self.external_redis:
            return self.external_redis
        password = "" if self.fast else self._secret("redis-password")
        auth = f":{password}@" if password else ""
        return f"redis://{auth}127.0.0.1:{self.redis_port}/0"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "BENCHTRAIL_DATABASE_URL": self.database_url,
            "BENCHTRAIL_REDIS_URL": self.redis_url,
            "BENCHTRAIL_DATA_DIR": str(self.state / "data"),
            "BENCHTRAIL_PUBLIC_URL": self.url,
            "BENCHTRAIL_API_URL": self.url,
            "BENCHTRAIL_RUNNER_POOLS": "local",
            "PATH": f"{BIN}:{REPO / '.tools' / 'bin'}:{env.get('PATH', '')}",
        })
        return env

    # -- infrastructure -------------------------------------------------------------------------
    def start_infra(self) -> None:
        for d in (self.run_dir, self.logs, self.state / "data"):
            d.mkdir(parents=True, exist_ok=True)
        if not self.external_db:
            self.start_postgres()
        if not self.external_redis and not self._alive("redis"):
            self.start_redis()

    def start_postgres(self) -> None:
        """Durable (fsync, synchronous_commit, full_page_writes on) with scram-sha-256 passwords kept in
        secrets/ (mode 600); `fast` stacks use the test harness's unsafe settings instead."""
        if self.fast:
            localstack.start_postgres(self.pg_dir, self.pg_port, unsafe=True)
            localstack.create_database(self.pg_port, "benchtrail")
            return
        self._ensure_secret("postgres-superuser-password")
        self._ensure_secret("postgres-benchtrail-password")
        superuser = self.secrets / "postgres-superuser-password"
        localstack.start_postgres(self.pg_dir, self.pg_port, password_file=superuser)
        localstack.create_database(self.pg_port, "benchtrail", self.secrets / "postgres-benchtrail-password", superuser)

    def start_redis(self) -> None:
        """Redis with append-only persistence; with a generated password (requirepass) unless `fast`.
        The password lives in a config file (mode 600), never on a command line."""
        conf = [f"port {self.redis_port}", "bind 127.0.0.1", f"dir {redis_quoted(str(self.state / 'data'))}", 'save ""',
                "appendonly yes", "loglevel warning"]
        env = dict(os.environ)
        if not self.fast:
            password = self._ensure_secret("redis-password")
            conf.append(f"requirepass {password}")
            env["REDISCLI_AUTH"] = password
        path = self.secrets / "redis.conf"
        self.secrets.mkdir(parents=True, exist_ok=True)
        self.secrets.chmod(0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write("\n".join(conf) + "\n")
        self._spawn("redis", ["redis-server", str(path)])
        self._wait(lambda: subprocess.run(["redis-cli", "-p", str(self.redis_port), "ping"], env=env,
                                          capture_output=True, text=True).stdout.strip() == "PONG", 15, "redis")

    def migrate(self, backups: Path | None = None) -> None:
        """The schema to this release's head. A database an earlier release made is backed up into `backups`
        first (database only: an upgrade never touches the raw files), so an upgrade that goes wrong can be
        undone with `make restore`."""
        if backups is not None:
            self.back_up_before_upgrade(backups)
        subprocess.run([str(BIN / "alembic"), "-c", str(REPO / "alembic.ini"), "upgrade", "head"],
                       env=self.env(), check=True)

    def back_up_before_upgrade(self, backups: Path) -> Path | None:
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory
        from sqlalchemy import create_engine

        script = ScriptDirectory.from_config(Config(str(REPO / "alembic.ini")))
        head = script.get_current_head()
        engine = create_engine(self.database_url)
        try:
            with engine.connect() as conn:
                current = MigrationContext.configure(conn).get_current_revision()
        finally:
            engine.dispose()
        if current is None or current == head:
            return None
        if current not in {rev.revision for rev in script.walk_revisions()}:
            raise SystemExit(f"stack: the database is at migration {current}, which this release does not know "
                             f"(its newest is {head}): it was upgraded by a newer release. Run that release, or "
                             "restore a backup made before that upgrade (make restore FILE=...)")
        running = [name for name in ("runner", "beat", "worker", "api") if self._alive(name)]
        if running:   # the earlier release's processes cannot work on the new schema
            log(f"stopping the earlier release's {', '.join(running)} before the upgrade")
            for name in running:
                self._kill(name)
        sys.path.insert(0, str(REPO / "infra" / "scripts"))
        from backup import BackupError, backup

        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        archive = backups / f"before-upgrade-{current}-{stamp}.tar"
        log(f"the database is at migration {current}, this release's is {head}: backing it up first")
        try:
            backup(self.database_url, self.state / "data", archive,
                   blobs_in=f"{self.state / 'data' / 'blobs'} (left in place: an upgrade does not change raw files)")
        except BackupError as exc:
            raise SystemExit(f"stack: backup before the upgrade failed, nothing was changed: {exc}") from None
        log(f"backup written: {archive} (database only; make restore FILE=... puts it back)")
        return archive

    def start_services(self) -> None:
        env = self.env()
        runner_env = {**env, "BENCHTRAIL_RUNNER_TOKEN": self.token("runner"), "BENCHTRAIL_RUNNER_NAME": "local"}
        # Supervised (restarted if a broker fault ends them), as in the tests: infra/localstack.py.
        celery = localstack.celery_command
        self._spawn("api", [str(BIN / "benchtrail-api"), "--host", "127.0.0.1", "--port", str(self.api_port)], env)
        self._spawn("worker", celery(BIN, *localstack.worker_args("worker", "ingest,analysis,default", 2)), env)
        self._spawn("beat", localstack.beat_command(BIN, self.run_dir / "beat-schedule"), env)
        # The runner is its own install (worker/runner; it supervises itself); here it shares the venv. On another
        # host: README "Runner on another host".
        # As root the runner (and so the load tool it starts) runs at the demo services' priority
        # (DEMO_NICE, infra/demo/start-java.sh), so other work on a shared machine does not decide its timings.
        self._spawn("runner", [str(BIN / "benchtrail-runner"), "start", "--pools", "local", "--name", "local"],
                    runner_env, nice=int(os.environ.get("DEMO_NICE", "-20")) if os.geteuid() == 0 else None)
        self._wait(lambda: self._health() == 200, 180, "the API health check")

    def load_recorded_demo(self, token: str) -> None:
        """The recorded demo (examples/data/) through the API, waiting until every run is ingested."""
        subprocess.run([str(BIN / "python"), str(REPO / "infra/scripts/demo.py"), "recorded", "--url", self.url],
                       env={**self.env(), "BENCHTRAIL_TOKEN": token}, check=True)

    def start_live_demo(self, token: str) -> None:
        """In the background: the Java demo services (baseline :18081, agent :18082) and the live demo runs on
        the local runner (infra/scripts/demo.py live); `down` stops it."""
        self._spawn("demo-live", [str(BIN / "python"), str(REPO / "infra/scripts/demo.py"), "live", "--url", self.url],
                    {**self.env(), "BENCHTRAIL_TOKEN": token})

    def stop(self, quiet: bool = False) -> None:
        for name in ("demo-live", "runner", "beat", "worker", "api", "redis"):
            self._kill(name, quiet)
        if not self.external_db:
            localstack.stop_postgres(self.pg_dir, self.pg_port)

    # -- processes ------------------------------------------------------------------------------
    def _pidfile(self, name: str) -> Path:
        return self.run_dir / f"{name}.pid"

    def _alive(self, name: str) -> bool:
        try:
            pid = int(self._pidfile(name).read_text())
            if _reaped(pid):   # our own child that has exited: kill(pid, 0) would still find its zombie
                return False
            os.kill(pid, 0)
            return True
        except (FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
            return False

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None, nice: int | None = None) -> None:
        """`argv` in a session of its own; at priority `nice`, its session too (session_priority), when given."""
        if self._alive(name):
            log(f"{name} already running")
            return
        out = (self.logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(argv, env=env or self.env(), stdout=out, stderr=subprocess.STDOUT, cwd=REPO,
                                start_new_session=True,
                                preexec_fn=None if nice is None else functools.partial(session_priority, nice))
        self._pidfile(name).write_text(str(proc.pid))
        log(f"{name} started (pid {proc.pid}, log {self.logs / (name + '.log')})")

    def _kill(self, name: str, quiet: bool = False) -> None:
        pidfile = self._pidfile(name)
        if not self._alive(name):
            pidfile.unlink(missing_ok=True)
            return
        pid = int(pidfile.read_text())
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self._alive(name):
            time.sleep(0.1)
        if self._alive(name):
            os.killpg(pid, signal.SIGKILL)
        pidfile.unlink(missing_ok=True)
        if not quiet:
            log(f"{name} stopped")

    def _health(self) -> int:
        try:
            with urllib.request.urlopen(f"{self.url}/api/health", timeout=2) as r:
                return r.status
        except Exception:
            return 0

    @staticmethod
    def _wait(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.2)
        raise SystemExit(f"stack: timed out waiting for {what}")

    # -- tokens ---------------------------------------------------------------------------------
    def token(self, role: str) -> str:
        """A site-wide token of `role` (admin, runner), created once and kept (mode 600)."""
        path = self.run_dir / f"{role}-token"
        if path.exists():
            return path.read_text().strip()
        out = subprocess.run([str(BIN / "benchtrail"), "admin", "create-token", "--role", role,
                              "--name", f"stack-{role}"], env=self.env(), check=True, capture_output=True, text=True)
        token = out.stdout.strip().splitlines()[-1]
        path.write_text(token)
        path.chmod(0o600)
        return token


def default_stack(create: bool = False) -> Stack:
    """`make up`'s stack (`create`: its PostgreSQL cluster's folder may be made); BENCHTRAIL_PORT,
    BENCHTRAIL_PG_PORT and BENCHTRAIL_REDIS_PORT move its ports."""
    state = REPO / ".data" / "stack"
    return Stack(state, api_port=int(os.environ.get("BENCHTRAIL_PORT", "8400")),
                 pg_port=int(os.environ.get("BENCHTRAIL_PG_PORT", "55432")),
                 redis_port=int(os.environ.get("BENCHTRAIL_REDIS_PORT", "56379")),
                 pg_dir=cluster_dir(state, REPO, create))


def cmd_up(args: argparse.Namespace) -> int:
    started = time.monotonic()
    stack = default_stack(create=True)
    stack.start_infra()
    if not stack.external_db:
        log(f"PostgreSQL cluster: {stack.pg_dir.resolve()}")
    stack.migrate(backups=REPO / ".data" / "backups")
    stack.start_services()
    token = stack.token("admin")
    if not args.no_demo:
        # The recorded demo is on the dashboard before the URL is printed; the live runs go on afterwards.
        stack.load_recorded_demo(token)
    print(f"\nBenchtrail is up: {stack.url}  (ready in {time.monotonic() - started:.0f} s)\nadmin token: {token}\n"
          f"CLI: export BENCHTRAIL_URL={stack.url} BENCHTRAIL_TOKEN=<token>; .venv/bin/benchtrail --help\n"
          f"CI client (Python >= 3.9, nothing to install): curl -fsSLO {stack.url}/cli/benchtrail.py\n"
          f"logs: {stack.logs}   stop: make down", flush=True)
    if not args.no_demo:
        stack.start_live_demo(token)
        print(f"live demo: the demo services start and the live runs go on in the background (projects "
              f"easeagent-demo and go-tracing-demo; a running run's page follows it); log: "
              f"{stack.logs / 'demo-live.log'}")
    return 0


def cmd_down(_: argparse.Namespace) -> int:
    stack = default_stack()
    stack.stop()
    for script in ("stop-java.sh", "stop-go-pts.sh"):   # the live demo's services
        subprocess.run([str(REPO / "infra/demo" / script)], env=stack.env(), check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return 0


def cmd_admin(args: argparse.Namespace) -> int:
    """`make admin ARGS="..."`: `benchtrail admin ...` against `make up`'s database and raw files."""
    stack = default_stack()
    return subprocess.run([str(BIN / "benchtrail"), "admin", *args.args], env=stack.env(), check=False).returncode


def cmd_backup(args: argparse.Namespace) -> int:
    """`make backup`: the database of `make up` (which must be running) and its raw uploads, one archive."""
    sys.path.insert(0, str(REPO / "infra" / "scripts"))
    from backup import BackupError, backup

    stack = default_stack()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    archive = Path(args.file).resolve() if args.file else REPO / ".data" / "backups" / f"benchtrail-{stamp}.tar"
    try:
        manifest = backup(stack.database_url, stack.state / "data", archive)
    except BackupError as exc:
        raise SystemExit(f"stack: backup failed: {exc}") from None
    log(f"backup written: {archive} (database + {len(manifest['blobs'])} raw file(s), mode 600)")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """`make restore FILE=...`: replace `make up`'s database and add the archive's raw uploads. The API,
    worker, beat and runner are stopped during the restore and started again afterwards (after the migrations,
    if the archive came from an earlier release); if they were not running, the next `make up` upgrades it."""
    sys.path.insert(0, str(REPO / "infra" / "scripts"))
    from backup import BackupError, restore

    stack = default_stack(create=True)
    stack.start_infra()
    running = [name for name in ("runner", "beat", "worker", "api") if stack._alive(name)]
    for name in running:
        stack._kill(name)
    try:
        manifest = restore(Path(args.file).resolve(), stack.database_url, stack.state / "data")
        if running:   # an older release's backup: upgraded before the services read it (else by `make up`)
            stack.migrate()
    except BackupError as exc:
        raise SystemExit(f"stack: restore failed: {exc}") from None
    finally:
        if running:
            stack.start_services()
    log(f"restored {args.file} (database + {len(manifest['blobs'])} raw file(s))")
    return 0


def cmd_ephemeral(args: argparse.Namespace) -> int:
    from infra.localstack import free_port

    state = Path(tempfile.mkdtemp(prefix="bt-stack-"))
    state.chmod(0o711)  # our own temp folder: the postgres user may pass through it to its data folder
    # All test traffic comes from one address with a few tokens: raise the abuse limits.
    for key in ("BENCHTRAIL_RATE_LIMIT_WRITES_PER_TOKEN", "BENCHTRAIL_RATE_LIMIT_WRITES_PER_ADDRESS",
                "BENCHTRAIL_RATE_LIMIT_FAILED_AUTH_PER_ADDRESS"):
        os.environ.setdefault(key, "1000000/minute")
    os.environ.pop("BENCHTRAIL_DATABASE_URL", None)
    os.environ.pop("BENCHTRAIL_REDIS_URL", None)
    stack = Stack(state, api_port=free_port(), pg_port=free_port(), redis_port=free_port(), fast=True)
    try:
        stack.start_infra()
        stack.migrate()
        stack.start_services()
        env = {**stack.env(), "BENCHTRAIL_E2E_URL": stack.url, "BENCHTRAIL_E2E_ADMIN_TOKEN": stack.token("admin")}
        if args.demo:
            stack.load_recorded_demo(stack.token("admin"))
        if args.seed:
            env["BENCHTRAIL_BENCH_RUN"] = seed_ab_run(stack.url, stack.token("admin"), state)
        command = args.command[1:] if args.command and args.command[0] == "--" else args.command
        return subprocess.run(command, env=env, cwd=args.cwd or REPO).returncode
    finally:
        logs = REPO / "artifacts" / "stack-logs"
        logs.mkdir(parents=True, exist_ok=True)
        for f in stack.logs.glob("*.log"):
            shutil.copy(f, logs / f.name)
        stack.stop(quiet=True)  # the test runner's summary stays the last thing printed
        shutil.rmtree(state, ignore_errors=True)


def seed_ab_run(url: str, token: str, workdir: Path) -> str:
    """One JMeter A/B run (thread groups 10/20/50, two labels) uploaded through the API; its slug."""
    import json

    from benchtrail_runner.client import Client
    from tests.support.jtl import write_jtl

    client = Client(url, token)
    client.post("/api/v1/projects", {"slug": "bench-ui", "name": "bench-ui"})
    files = [write_jtl(workdir / "baseline.jtl", seed=1, per_group=2000),
             write_jtl(workdir / "agent.jtl", seed=2, per_group=2000, slowdown=1.2)]
    meta = {"files": [{"variant": "baseline"}, {"variant": "agent"}], "agent_version": "1.0.0"}
    slug = client.upload("bench-ui", json.dumps(meta), files, idempotency_key=None)["run"]
    run = client.wait_for_run(slug, timeout=120)
    if run["status"] != "completed":
        raise SystemExit(f"stack: seeding run {slug} {run['status']}: {run.get('status_detail')}")
    return slug


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("--no-demo", action="store_true")
    up.set_defaults(fn=cmd_up)
    sub.add_parser("down").set_defaults(fn=cmd_down)
    bk = sub.add_parser("backup", help="database + raw uploads of `make up` into one archive")
    bk.add_argument("file", nargs="?", help="archive path (default .data/backups/benchtrail-<UTC>.tar)")
    bk.set_defaults(fn=cmd_backup)
    rs = sub.add_parser("restore", help="restore an archive written by `backup` into `make up`'s stack")
    rs.add_argument("file")
    rs.set_defaults(fn=cmd_restore)
    adm = sub.add_parser("admin", help="`benchtrail admin ...` on `make up`'s database and raw files")
    adm.add_argument("args", nargs=argparse.REMAINDER)
    adm.set_defaults(fn=cmd_admin)
    eph = sub.add_parser("ephemeral")
    eph.add_argument("--cwd", default=None)
    eph.add_argument("--seed", action="store_true", help="upload a JMeter A/B run first (BENCHTRAIL_BENCH_RUN)")
    eph.add_argument("--demo", action="store_true", help="load the recorded demo (examples/data/) first, as `up` does")
    eph.add_argument("command", nargs=argparse.REMAINDER)
    eph.set_defaults(fn=cmd_ephemeral)
    args = parser.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())

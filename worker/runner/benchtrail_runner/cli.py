"""`benchtrail-runner`: start a runner on a load host, or check that it can work.

    benchtrail-runner start [--env-file FILE] [--api-url URL] [--pools a,b] [--name NAME] [--concurrency N]
    benchtrail-runner check [--env-file FILE] [--tools hey,k6]

Secrets (BENCHTRAIL_BROKER_URL with the Redis password, BENCHTRAIL_RUNNER_TOKEN) come from the
environment or an env file (KEY=VALUE lines, mode 600), never from flags: a command line is visible
to every user of the host. `start` replaces itself with `benchtrail-supervise celery worker` on the
pools' queues, so a broker fault that ends the worker starts it again.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from .config import RunnerSettings, settings_from

SECRET_VARS = ("BENCHTRAIL_BROKER_URL", "BENCHTRAIL_REDIS_URL", "BENCHTRAIL_RUNNER_TOKEN")


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines (blank lines and # comments ignored, values may be shell-quoted)."""
    out: dict[str, str] = {}
    try:
        text = path.read_text()
    except OSError as exc:
        raise SystemExit(f"benchtrail-runner: cannot read {path}: {exc.strerror}") from None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise SystemExit(f"benchtrail-runner: {path} line {n}: expected KEY=VALUE")
        try:
            parts = shlex.split(value)
        except ValueError as exc:
            raise SystemExit(f"benchtrail-runner: {path} line {n}: {exc}") from None
        out[key] = parts[0] if len(parts) == 1 else " ".join(parts)
    return out


def _environment(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    if args.env_file:
        env.update(read_env_file(Path(args.env_file)))
    for flag, var in (("api_url", "BENCHTRAIL_API_URL"), ("pools", "BENCHTRAIL_RUNNER_POOLS"),
                      ("name", "BENCHTRAIL_RUNNER_NAME"), ("tools_dir", "BENCHTRAIL_TOOLS_DIR")):
        value = getattr(args, flag, None)
        if value:
            env[var] = value
    return env


def _settings_or_exit(env: dict[str, str]) -> RunnerSettings:
    settings = settings_from(env)
    problems = settings.problems()
    if problems:
        sys.exit("benchtrail-runner: cannot start:\n  " + "\n  ".join(problems))
    return settings


def start(args: argparse.Namespace) -> None:
    env = _environment(args)
    settings = _settings_or_exit(env)
    env["BENCHTRAIL_BROKER_URL"] = settings.broker_url
    py = sys.executable
    argv = [py, "-m", "benchtrail_runner.supervise",
            py, "-m", "celery", "-A", "benchtrail_runner.app", "--quiet", "worker",
            "-Q", ",".join(settings.queues), "-c", str(args.concurrency),
            "-n", f"runner-{settings.name}@%h", "--loglevel", args.loglevel,
            "--without-gossip", "--without-mingle"]
    os.execve(py, argv, env)


def check(args: argparse.Namespace) -> None:
    """The API answers and accepts the token, the broker accepts the password, the tools are there."""
    import redis

    from .client import Client
    from .tools import ToolNotInstalled, tool_path

    env = _environment(args)
    settings = _settings_or_exit(env)
    failures = []
    try:
        http = Client(settings.api_url, settings.token, timeout=10).http
        health = http.get("/api/health")
        if health.status_code != 200:
            failures.append(f"API {settings.api_url}: /api/health answered {health.status_code}")
        elif (r := http.get("/api/v1/projects")).status_code in (401, 403):
            failures.append(f"API {settings.api_url}: the runner token is refused ({r.status_code})")
    except Exception as exc:  # any transport error is the answer to "can I reach the API?"
        failures.append(f"API {settings.api_url}: {type(exc).__name__}: {exc}")
    try:
        redis.Redis.from_url(settings.broker_url, socket_timeout=5).ping()
    except Exception as exc:
        failures.append(f"broker: {type(exc).__name__} (check host, port and password in BENCHTRAIL_BROKER_URL)")
    if settings.tools_dir:
        os.environ["BENCHTRAIL_TOOLS_DIR"] = str(settings.tools_dir)
    for tool in [t for t in (args.tools or "").split(",") if t]:
        try:
            print(f"{tool}: {tool_path(tool)}")
        except ToolNotInstalled as exc:
            failures.append(str(exc))
    if failures:
        sys.exit("benchtrail-runner: check failed:\n  " + "\n  ".join(failures))
    print(f"ok: API {settings.api_url}, broker, pools {', '.join(settings.pools)}")


def build_parser() -> argparse.ArgumentParser:
    """The command line (also the manual's reference of `benchtrail-runner`)."""
    parser = argparse.ArgumentParser(prog="benchtrail-runner", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, fn in (("start", start), ("check", check)):
        p = sub.add_parser(name, help=(fn.__doc__ or "").split("\n")[0] or "start the runner")
        p.set_defaults(fn=fn)
        p.add_argument("--env-file", help="KEY=VALUE file with BENCHTRAIL_* settings (keep it mode 600)")
        p.add_argument("--api-url", help="the API (BENCHTRAIL_API_URL)")
        p.add_argument("--pools", help="comma-separated pools to serve (BENCHTRAIL_RUNNER_POOLS)")
        p.add_argument("--name", help="runner name shown on runs (BENCHTRAIL_RUNNER_NAME)")
        p.add_argument("--tools-dir", help="folder with bin/<tool> (BENCHTRAIL_TOOLS_DIR)")
    start_p = sub.choices["start"]
    start_p.add_argument("--concurrency", type=int, default=1, help="plans run at once (default 1)")
    start_p.add_argument("--loglevel", default="INFO", help="Celery's log level (default INFO)")
    sub.choices["check"].add_argument("--tools", help="comma-separated tools that must be installed")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()

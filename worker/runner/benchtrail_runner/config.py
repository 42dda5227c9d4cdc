"""A runner's settings: what a load host needs and nothing else (env prefix BENCHTRAIL_).

`VARIABLES` names each with its default and meaning; the manual's configuration reference is generated
from it (docs: reference/configuration)."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DEFAULT_ALLOWLIST = "127.0.0.1:*,localhost:*,[::1]:*"


@dataclass(frozen=True)
class Variable:
    name: str
    default: str
    description: str


VARIABLES: tuple[Variable, ...] = (
    Variable("BENCHTRAIL_API_URL", "http://127.0.0.1:8400", "Where the runner reaches the API, e.g. `https://bench.example.com`."),
    Variable("BENCHTRAIL_BROKER_URL", "BENCHTRAIL_REDIS_URL, else redis://127.0.0.1:56379/0",
             "The Redis broker with its password, `redis://:PASSWORD@HOST:6379/0` (`BENCHTRAIL_REDIS_URL`, "
             "the server's name for it, is read too). Never taken as a flag: a command line is visible to "
             "every user of the host."),
    Variable("BENCHTRAIL_RUNNER_TOKEN", "(none)", "A runner token (`benchtrail admin create-token --role runner`); "
             "never taken as a flag."),
    Variable("BENCHTRAIL_RUNNER_POOLS", "default", "Comma-separated pools this runner serves: it takes runs from the "
             "queues `runner.<pool>`."),
    Variable("BENCHTRAIL_RUNNER_NAME", "the host name", "Shown on the runs it claims."),
    Variable("BENCHTRAIL_TOOLS_DIR", "(none: tools from PATH)", "Where the load tools are (`bin/hey`, `bin/k6`, "
             "`bin/jmeter` …, what `infra/tools/install.sh` writes; its default is the checkout's `.tools`); "
             "a tool not there is looked up on PATH."),
    Variable("BENCHTRAIL_TARGET_ALLOWLIST", DEFAULT_ALLOWLIST, "host:port patterns plans may load, checked again on "
             "this host."),
    Variable("BENCHTRAIL_LOG_JSON", "true", "JSON log lines (one object per line)."),
    Variable("BENCHTRAIL_RUNNER_UPLOAD_RETRY_S", "3600", "How long (seconds) a runner retries its results upload "
             "before it fails the run and keeps the package for a re-send."),
    Variable("BENCHTRAIL_RUNNER_WORK_DIR", "(the system's temporary folder)", "Where a runner makes each run's work "
             "directory (kept when its results could not be delivered)."),
    Variable("BENCHTRAIL_RUNNER_UPLOAD_CHUNK_BYTES", str(8 << 20), "Chunk size (bytes) of a runner's resumable "
             "results upload (the server takes chunks of up to 64 MB)."),
    Variable("BENCHTRAIL_ASYNC_PROFILER", "$BENCHTRAIL_TOOLS_DIR/async-profiler/libasyncProfiler.so", "The "
             "async-profiler library a plan's `profile: {runtime: jvm, profiler: async-profiler}` loads into the "
             "target JVM (`infra/tools/install.sh demo` puts it in the tools folder)."),
)
_POOL = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class RunnerSettings:
    api_url: str
    broker_url: str
    token: str | None
    name: str
    pools: tuple[str, ...]
    tools_dir: Path | None
    target_allowlist: str
    log_json: bool
    upload_retry_s: float = 3600.0   # how long a results upload is retried before it is kept for `resend`
    work_dir: Path | None = None     # where each run's work directory is made (kept when undelivered)
    upload_chunk_bytes: int = 8 << 20  # results are sent in chunks of this size, resumed after a cut

    @property
    def target_patterns(self) -> list[str]:
        return [p.strip() for p in self.target_allowlist.split(",") if p.strip()]

    @property
    def queues(self) -> list[str]:
        return [f"runner.{p}" for p in self.pools]

    def problems(self) -> list[str]:
        """What keeps this runner from working, one line each (names the variable, never its value)."""
        out = []
        if not self.api_url.startswith(("http://", "https://")):
            out.append("BENCHTRAIL_API_URL must be an http(s) URL")
        if not self.broker_url.startswith(("redis://", "rediss://")):
            out.append("BENCHTRAIL_BROKER_URL must be a redis:// or rediss:// URL")
        if not self.token:
            out.append("BENCHTRAIL_RUNNER_TOKEN is not set")
        for p in self.pools:
            if not _POOL.match(p):
                out.append(f"BENCHTRAIL_RUNNER_POOLS: pool '{p}' must match {_POOL.pattern}")
        if not self.pools:
            out.append("BENCHTRAIL_RUNNER_POOLS names no pool")
        return out


def _flag(value: str) -> bool:
    return value.strip().lower() not in ("0", "false", "no", "off", "")


def settings_from(env: Mapping[str, str]) -> RunnerSettings:
    tools = env.get("BENCHTRAIL_TOOLS_DIR")
    return RunnerSettings(
        api_url=env.get("BENCHTRAIL_API_URL", "http://127.0.0.1:8400").rstrip("/"),
        broker_url=env.get("BENCHTRAIL_BROKER_URL") or env.get("BENCHTRAIL_REDIS_URL") or "redis://127.0.0.1:56379/0",
        token=env.get("BENCHTRAIL_RUNNER_TOKEN") or None,
        name=env.get("BENCHTRAIL_RUNNER_NAME") or socket.gethostname(),
        pools=tuple(p.strip() for p in env.get("BENCHTRAIL_RUNNER_POOLS", "default").split(",") if p.strip()),
        tools_dir=Path(tools) if tools else None,
        target_allowlist=env.get("BENCHTRAIL_TARGET_ALLOWLIST", DEFAULT_ALLOWLIST),
        log_json=_flag(env.get("BENCHTRAIL_LOG_JSON", "true")),
        upload_retry_s=float(env.get("BENCHTRAIL_RUNNER_UPLOAD_RETRY_S", "3600")),
        work_dir=Path(env["BENCHTRAIL_RUNNER_WORK_DIR"]) if env.get("BENCHTRAIL_RUNNER_WORK_DIR") else None,
        upload_chunk_bytes=max(1, int(env.get("BENCHTRAIL_RUNNER_UPLOAD_CHUNK_BYTES", str(8 << 20)))),
    )


@lru_cache
def get_settings() -> RunnerSettings:
    return settings_from(os.environ)

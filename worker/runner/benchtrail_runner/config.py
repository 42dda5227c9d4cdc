"""A runner's settings: what a load host needs and nothing else (env prefix BENCHTRAIL_).

    BENCHTRAIL_API_URL          the API, e.g. https://benchtrail.example.com
    BENCHTRAIL_BROKER_URL       the Redis broker with its password, redis://:PASSWORD@HOST:6379/0
                                (BENCHTRAIL_REDIS_URL, the server's name for it, is read too)
    BENCHTRAIL_RUNNER_TOKEN     a runner token (benchtrail admin create-token --role runner)
    BENCHTRAIL_RUNNER_POOLS     comma-separated pools this runner serves (queue runner.<pool>), default "default"
    BENCHTRAIL_RUNNER_NAME      shown on the runs it claims, default the host name
    BENCHTRAIL_TOOLS_DIR        where the load tools are (bin/hey, bin/k6, bin/jmeter ...)
    BENCHTRAIL_TARGET_ALLOWLIST host[:port] patterns plans may load (checked again on this host)
    BENCHTRAIL_LOG_JSON         JSON log lines (default true)
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DEFAULT_ALLOWLIST = "127.0.0.1:*,localhost:*,[::1]:*"
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

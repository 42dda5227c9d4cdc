"""One settings object for the API, the worker, the runner and the CLI (env prefix BENCHTRAIL_)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BENCHTRAIL_", extra="ignore")

    # development | test | production. Production (the Docker images) refuses a broker without a password:
    # whoever reaches an open Redis can queue work for the workers and the runners.
    env: str = "development"
    database_url: str = "postgresql+psycopg://benchtrail@127.0.0.1:55432/benchtrail"
    # Database connections the API server (`benchtrail-api`, all its worker processes together) may hold:
    # each process gets an equal share for its reads, its writes and its event-loop reads (db.api_share),
    # kept open, and a request waits for a free one rather than opening more than the database allows.
    api_db_connections: int = Field(default=48, ge=3)
    # Set by `benchtrail-api` for its worker processes: how many of them share api_db_connections. Unset
    # (an app served otherwise, the worker, the CLI): the engine of writes is not bounded by the share.
    api_processes: int | None = Field(default=None, ge=1)
    redis_url: str = "redis://127.0.0.1:56379/0"
    data_dir: Path = Path(".data")
    public_url: str = "http://127.0.0.1:8400"
    frontend_dist: Path | None = None

    # Where raw files live (benchtrail/storage.py): `local` = under data_dir (API and workers share it),
    # `s3` = an S3-compatible bucket (credentials from boto3's environment chain, never settings).
    storage: Literal["local", "s3"] = "local"
    s3_bucket: str = ""
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    s3_prefix: str = ""

    max_upload_mb: int = 512
    max_uncompressed_mb: int = 2048
    max_compression_ratio: int = 200

    # Abuse limits (the `limits` library's notation, e.g. "600/minute"; counted in Redis, shared by
    # every API process). Writes = POST/PUT/PATCH/DELETE under /api; failed authentications = answers
    # 401 to a request that carried an Authorization header. When Redis is unreachable the limits are
    # not enforced (writes must keep working through a broker outage).
    rate_limit_enabled: bool = True
    rate_limit_writes_per_token: str = "600/minute"
    rate_limit_writes_per_address: str = "1200/minute"
    rate_limit_failed_auth_per_address: str = "30/minute"
    # Seconds a client is told to wait (Retry-After) when the database or the broker is unreachable.
    outage_retry_after_s: int = 5

    # Runs stuck in a live state longer than this are failed by the sweeper.
    run_heartbeat_timeout_s: int = 60
    sweeper_interval_s: int = 15
    # An ingest or analysis queued this long ago that no worker is working on (its run row is not
    # locked) is queued again: a worker that died, or retries that gave up during a database outage.
    stage_requeue_after_s: int = 45

    # Memory each API process may use to keep the answers of hot reads (http_cache.remembered_json).
    answer_cache_mb: int = Field(default=64, ge=0)

    log_json: bool = True
    # API requests slower than this (or answered 5xx) are logged, one line each; 0 logs every request.
    log_slow_request_ms: float = 500.0

    # The API's own URL, for the CLI. A runner's settings (token, name, upload retries, work and tools
    # folders) are read by the runner's own install: benchtrail_runner/config.py.
    api_url: str = "http://127.0.0.1:8400"

    # Load tests may only target these host[:port] patterns (fnmatch); runners check again.
    target_allowlist: str = "127.0.0.1:*,localhost:*,[::1]:*"
    # A plan's absolute JMX paths must lie inside one of these folders (comma-separated); relative
    # paths stay inside the plan's folder. Empty = no absolute JMX path is accepted.
    jmx_dirs: str = ""
    # Webhooks may only be sent to these host[:port] patterns (fnmatch; no port = any port). Empty = none.
    webhook_allowlist: str = ""

    @model_validator(mode="after")
    def _refuse_unsafe_settings(self) -> "Settings":
        if self.env == "production" and not urlsplit(self.redis_url).password:
            raise ValueError("BENCHTRAIL_REDIS_URL must carry the broker's password in production "
                             "(redis://:PASSWORD@HOST:PORT/0)")
        if self.storage == "s3" and not self.s3_bucket.strip():
            raise ValueError("BENCHTRAIL_STORAGE=s3 needs BENCHTRAIL_S3_BUCKET (the bucket the raw files go to)")
        return self

    @property
    def target_patterns(self) -> list[str]:
        return [p.strip() for p in self.target_allowlist.split(",") if p.strip()]

    @property
    def jmx_folders(self) -> list[str]:
        return [p.strip() for p in self.jmx_dirs.split(",") if p.strip()]

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"


@lru_cache
def get_settings() -> Settings:
    return Settings()

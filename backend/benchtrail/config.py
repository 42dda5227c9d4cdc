"""One settings object for the API, the worker, the runner and the CLI (env prefix BENCHTRAIL_)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict



class Settings(BaseSettings):
    """The server's settings (API, worker, beat, `benchtrail admin`). Every field's description is the
    manual's configuration reference (docs: reference/configuration, generated from this model)."""

    model_config = SettingsConfigDict(env_prefix="BENCHTRAIL_", extra="ignore")

    env: str = Field("development", description=(
        "`development`, `test` or `production`; `production` (the Docker images) refuses a `BENCHTRAIL_REDIS_URL` "
        "without a password: whoever reaches an open Redis can queue work for the workers and the runners."))
    database_url: str = Field("postgresql+psycopg://benchtrail@127.0.0.1:55432/benchtrail", description=(
        "SQLAlchemy URL of the PostgreSQL database (`postgresql+psycopg://user:password@host:port/db`). "
        "`make up` sets it with the password it generated (kept in `.data/stack/secrets/`)."))
    # Each process of the API server gets an equal share for its reads, its writes and its event-loop
    # reads (db.api_share), kept open; a request waits for a free one rather than opening more.
    api_db_connections: int = Field(default=48, ge=3, description=(
        "Database connections all processes of `benchtrail-api` hold together (at least 3 per process), "
        "each process an equal share kept open: a sixth for the event-loop reads (1 to 4), a third for writes "
        "and other requests (1 to 8), the rest for the hot reads (at most 16). A request waits up to 30 s for "
        "a free connection of its process (then 503 with `Retry-After`) rather than opening one more. The "
        "hot reads' pool is in autocommit; a read whose pooled connection died (database restart) is "
        "retried once on a new one. The server logs at startup how many it may open and how many the "
        "database lets its role open, with a warning when that is fewer."))
    api_processes: int | None = Field(default=None, ge=1, description=(
        "Set by `benchtrail-api` for its own worker processes (not by you): how many processes share "
        "`BENCHTRAIL_API_DB_CONNECTIONS`. Unset (an app served otherwise, the worker, the CLI), the "
        "engine of writes is not bounded by the share."))
    api_workers: int | None = Field(default=None, ge=1, description=(
        "Worker processes of `benchtrail-api` (the production server `make up` and the image run); unset: one "
        "per core the process may use. Each listens on a socket of its own (SO_REUSEPORT: the kernel "
        "spreads new connections over them; a port already in use stops the server with an error) and "
        "freezes the objects it built at startup out of the garbage collector's generations "
        "(`gc.freeze`), which keeps a cached read's p99 low. `benchtrail-api --workers N` overrides it."))
    redis_url: str = Field("redis://127.0.0.1:56379/0", description=(
        "The Celery broker and the abuse limits' counters (`redis://:password@host:port/db`). `make up` "
        "sets it with the password it generated; the API, worker, beat and runners read it the same way."))
    data_dir: Path = Field(Path(".data"), description=(
        "Raw files (content-addressed, with `BENCHTRAIL_STORAGE=local`) and scratch space. The API's and "
        "the worker's temporary files go to `<dir>/tmp` (uploads are written there as they arrive, then "
        "linked into the blob store, never into a possibly RAM-backed `/tmp`) unless `TMPDIR` is set; what "
        "a process killed mid-upload or mid-ingest left in `<dir>/tmp` is removed when an API or a worker "
        "starts, once nothing in it changed for a day."))
    public_url: str = Field("http://127.0.0.1:8400", description="Base URL of permalinks, snapshots and links in webhooks.")
    frontend_dist: Path | None = Field(None, description=(
        "The built dashboard the API serves at `/`; unset: `frontend/dist` of the checkout."))
    docs_site: Path | None = Field(None, description=(
        "The built manual the API serves at `/docs` (`mkdocs build`); unset: `docs/site` of the checkout. "
        "When it is not built, `/docs` answers 404 with the command that builds it."))

    # benchtrail/storage.py: credentials come from boto3's own environment chain, never from settings.
    storage: Literal["local", "s3"] = Field("local", description=(
        "Where raw files live: `local` (under `BENCHTRAIL_DATA_DIR/blobs`, shared by the API and every "
        "ingest worker) or `s3` (an S3-compatible bucket; credentials from the environment as boto3 reads "
        "them: `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, an instance or pod role)."))
    s3_bucket: str = Field("", description="The bucket (created by you); required with `BENCHTRAIL_STORAGE=s3`.")
    s3_endpoint_url: str | None = Field(None, description=(
        "Endpoint of an S3-compatible store other than AWS (MinIO, Ceph, R2 …), e.g. `https://minio.lan:9000`; "
        "unset: AWS."))
    s3_region: str | None = Field(None, description="The bucket's region; unset: boto3's default.")
    s3_prefix: str = Field("", description=(
        "Key prefix inside the bucket: objects are `<prefix>/blobs/<xx>/<sha256>` and "
        "`<prefix>/uploads/<session>/…`."))

    max_upload_mb: int = Field(512, description=(
        "Largest request body and file, in MB; over it the answer is 413, from `Content-Length` before the "
        "body is read (a chunked body is counted as it arrives and cut off at the limit)."))
    max_uncompressed_mb: int = Field(2048, description=(
        "Largest decompressed size of a compressed file (gzip, zstd or single-file zip), in MB; past it: 413."))
    max_compression_ratio: int = Field(200, description=(
        "A compressed file may expand to at most this many times its compressed size (and at most "
        "`BENCHTRAIL_MAX_UNCOMPRESSED_MB`); past it the upload is refused as a possible decompression bomb (413)."))

    # Counted in Redis, shared by every API process. When Redis is unreachable the limits are not
    # enforced (writes must keep working through a broker outage).
    rate_limit_enabled: bool = Field(True, description="Abuse limits on or off.")
    rate_limit_writes_per_token: str = Field("600/minute", description=(
        "Writes (POST/PUT/PATCH/DELETE under `/api`) per token, in the `limits` library's notation "
        "(`N/second|minute|hour|day`); over it: 429 with `Retry-After`."))
    rate_limit_writes_per_address: str = Field("1200/minute", description="Writes per client address.")
    rate_limit_failed_auth_per_address: str = Field("30/minute", description=(
        "Failed authentications (a 401 to a request that carried an `Authorization` header) per client "
        "address; once over it, every request of that address carrying a token is answered 429 until the "
        "window passes (anonymous reads still work)."))
    outage_retry_after_s: int = Field(5, description=(
        "`Retry-After` (seconds) of a 503 answered while PostgreSQL, Redis or the raw file store is unreachable."))

    run_heartbeat_timeout_s: int = Field(60, description=(
        "Beat's sweeper fails a running run whose runner has not reported for this many seconds (load tests "
        "are never restarted)."))
    sweeper_interval_s: int = Field(15, description=(
        "How often (seconds) beat runs the sweeper, which also folds the projects' change rows into their "
        "revisions."))
    stage_requeue_after_s: int = Field(45, description=(
        "An ingest or analysis queued this many seconds ago that no worker holds (its run row is not locked) "
        "is queued again by the sweeper: a worker that died, a job lost with the broker, retries that gave up "
        "during a database outage."))

    answer_cache_mb: int = Field(default=64, ge=0, description=(
        "Memory (MB) each API process keeps the answers of hot reads in, keyed by the URL and the project's "
        "revision (least recently used dropped first); `0` keeps none."))

    log_json: bool = Field(True, description=(
        "JSON logs, one object per line with the event's real level; `false` for key=value lines in a terminal."))
    log_slow_request_ms: float = Field(500.0, description=(
        "API requests this slow (milliseconds), or answered 5xx, are logged, one `request` line each; 0 logs "
        "every request."))

    api_url: str = Field("http://127.0.0.1:8400", description=(
        "The API's own URL, for clients on the server host. A runner reads its own settings (see the "
        "Runner table)."))

    target_allowlist: str = Field("127.0.0.1:*,localhost:*,[::1]:*", description=(
        "host:port patterns (fnmatch, comma-separated) a plan's targets and Prometheus URLs must match; "
        "runners check again on their host."))
    jmx_dirs: str = Field("", description=(
        "Folders (comma-separated) a plan's absolute JMX paths must lie in; relative paths stay inside the "
        "plan's folder. Empty: no absolute JMX path is accepted."))
    webhook_allowlist: str = Field("", description=(
        "host[:port] patterns (fnmatch, comma-separated; no port = any port) webhooks may be sent to. "
        "Empty: no webhook can be created."))

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

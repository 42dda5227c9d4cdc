"""Liveness of the components the API depends on, and Prometheus metrics."""

from __future__ import annotations

import shutil
from typing import Literal

import redis
from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field
from sqlalchemy import text

from benchtrail.config import get_settings
from benchtrail.db import get_engine
from benchtrail.errors import ErrorCode
from benchtrail.openapi import ErrorBody

router = APIRouter(tags=["operations"])


def _check_db() -> str:
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SET LOCAL statement_timeout = 2000"))
            conn.execute(text("SELECT 1"))
        return "ok"
    except Exception as exc:  # any failure means "down"; the reason is reported, not raised
        return f"down: {type(exc).__name__}"


def _check_redis() -> str:
    try:
        client = redis.Redis.from_url(get_settings().redis_url, socket_timeout=2, socket_connect_timeout=2)
        try:
            client.ping()
        finally:
            client.close()
        return "ok"
    except Exception as exc:
        return f"down: {type(exc).__name__}"


class _Components(BaseModel):
    db: str = Field(description='"ok", or "down: <error class>"')
    redis: str = Field(description='"ok", or "down: <error class>"')
    disk_free_mb: int | None = Field(
        description="Free space (MiB) of BENCHTRAIL_DATA_DIR, where uploads are received and raw files kept "
                    "(with BENCHTRAIL_STORAGE=s3, scratch only); null if it cannot be read. Informative: a "
                    "full disk does not make the API degraded, its writes answer 503")


class Health(_Components):
    status: Literal["ok"]


class HealthDegraded(ErrorBody, _Components):
    """error = ServiceUnavailable, detail = "component down: <names>"."""

    status: Literal["degraded"]


def _disk_free_mb() -> int | None:
    try:
        return shutil.disk_usage(get_settings().data_dir).free // (1 << 20)
    except OSError:
        return None


@router.get("/api/health", response_model=Health, responses={
    503: {"model": HealthDegraded, "description": "The database or the broker is down (named in `detail`); retry "
                                                  "after Retry-After seconds"}})
def health() -> JSONResponse:
    """The database's and the broker's status and the data folder's free space (`disk_free_mb`). 503 with `Retry-
    After`, naming the component that is down, while one is."""
    checks = {"db": _check_db(), "redis": _check_redis()}
    free = _disk_free_mb()
    down = [k for k, v in checks.items() if v != "ok"]
    if not down:
        return JSONResponse(Health(status="ok", **checks, disk_free_mb=free).model_dump())
    body = HealthDegraded(status="degraded", **checks, disk_free_mb=free, error="ServiceUnavailable",
                          code=ErrorCode.UNAVAILABLE, detail=f"component down: {', '.join(down)}")
    return JSONResponse(body.model_dump(), status_code=503,
                        headers={"Retry-After": str(get_settings().outage_retry_after_s)})


@router.get("/metrics", include_in_schema=False)
def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

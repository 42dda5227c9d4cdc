"""Liveness of the components the API depends on, and Prometheus metrics."""

from __future__ import annotations

import redis
from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from benchtrail.config import get_settings
from benchtrail.db import get_engine

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


@router.get("/api/health")
def health() -> JSONResponse:
    checks = {"db": _check_db(), "redis": _check_redis()}
    ok = all(v == "ok" for v in checks.values())
    body = {"status": "ok" if ok else "degraded", **checks}
    if not ok:
        down = [k for k, v in checks.items() if v != "ok"]
        body.update(error="ServiceUnavailable", detail=f"component down: {', '.join(down)}")
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", include_in_schema=False)
def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

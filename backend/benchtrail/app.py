"""The API process: /api/v1, /api/health, /metrics, and the built dashboard at /."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import Counter, Histogram
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchtrail import logging as applog
from benchtrail.config import get_settings
from benchtrail.errors import AppError, InvalidText, ServiceUnavailable, outage_kind

REQUESTS = Counter("benchtrail_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram("benchtrail_http_request_seconds", "HTTP request latency", ["method", "route"])


def create_app() -> FastAPI:
    settings = get_settings()
    applog.configure(json=settings.log_json)
    # One access line per request through the structured formatter cost as much as a small read: the
    # API logs its slow and failed requests itself (ObserveMiddleware); uvicorn's access lines are off.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    app = FastAPI(title="Benchtrail", version="0.1.0", openapi_url="/api/openapi.json",
                  docs_url="/api/docs", redoc_url=None, lifespan=_lifespan)
    _install_error_handlers(app)
    _install_middleware(app)

    from benchtrail.health.endpoints import router as health_router
    from benchtrail.projects.endpoints import router as projects_router

    app.include_router(health_router)
    app.include_router(projects_router)
    for module in _domain_routers():
        app.include_router(module)
    from benchtrail import openapi

    openapi.install(app)  # the error body and the statuses every operation shares
    _mount_frontend(app, settings.frontend_dist)
    return app


@asynccontextmanager
async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
    yield
    from benchtrail.db import close_loop_pool

    await close_loop_pool()


def _domain_routers() -> list:
    from benchtrail.alerts.endpoints import router as alerts_router
    from benchtrail.runs.execution_endpoints import router as execution_router
    from benchtrail.plans.endpoints import router as plans_router
    from benchtrail.profiles.endpoints import router as profiles_router
    from benchtrail.runs.endpoints import router as runs_router
    from benchtrail.sharing.endpoints import router as sharing_router
    from benchtrail.trails.endpoints import router as trails_router
    from benchtrail.uploads.endpoints import router as uploads_router

    return [runs_router, uploads_router, plans_router, execution_router, trails_router, alerts_router,
            sharing_router, profiles_router]


def error_response(exc: AppError) -> JSONResponse:
    """The JSON error body; a 503 (an outage: database, broker, object store) says when to retry."""
    headers = {"Retry-After": str(get_settings().outage_retry_after_s)} if exc.status == 503 else None
    return JSONResponse(exc.to_dict(), status_code=exc.status, headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def app_error(_: Request, exc: AppError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        from benchtrail.validation import unsafe_text_errors

        unsafe = unsafe_text_errors(exc.errors())
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in unsafe or exc.errors())
        if unsafe:
            return JSONResponse(InvalidText(problems).to_dict(), status_code=InvalidText.status)
        return JSONResponse({"error": "ValidationError", "detail": problems}, status_code=422)

    _install_edge_error_handlers(app)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        outage = outage_kind(exc)
        if outage is not None:
            # FastAPI answers any failure while reading a form as 400 "error parsing the body", a full disk
            # under the spooled upload included: the cause decides.
            applog.log.warning("unavailable", component=outage, error=str(exc.__cause__ or exc)[:300])
            return error_response(ServiceUnavailable(f"the {outage} is unavailable, retry later"))
        kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
        return JSONResponse({"error": kind, "detail": str(exc.detail)}, status_code=exc.status_code)


def _install_middleware(app: FastAPI) -> None:
    from benchtrail.edge import EdgeMiddleware

    # Innermost: metrics per route (a pure ASGI layer: no extra task or body copy per request).
    app.add_middleware(ObserveMiddleware)
    # Outermost: security headers, 413 before the body is read, rate limits, 503 on outages.
    app.add_middleware(EdgeMiddleware, settings=get_settings())


class ObserveMiddleware:
    """Prometheus counts and latency per route. Only slow or failed API requests are logged (one
    structured line each): a line per request cost as much as serving a small read."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.slow_s = get_settings().log_slow_request_ms / 1000

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500   # what the edge answers when the app raises before it starts a response

        async def observed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observed_send)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            elapsed = time.perf_counter() - started
            method = scope.get("method", "")
            REQUESTS.labels(method, route, status).inc()
            LATENCY.labels(method, route).observe(elapsed)
            if route.startswith("/api") and (status >= 500 or elapsed >= self.slow_s):
                applog.log.info("request", method=method, route=route, status=status, ms=round(elapsed * 1000, 1))


def _install_edge_error_handlers(app: FastAPI) -> None:
    """A lost database/broker connection is 503 + Retry-After; a value the database refuses is 400."""
    import psycopg
    import sqlalchemy.exc as sa_exc

    async def unavailable_or_invalid(_: Request, exc: Exception) -> JSONResponse:
        kind = outage_kind(exc)
        if kind is not None:
            applog.log.warning("unavailable", component=kind, error=str(exc)[:300])
            return error_response(ServiceUnavailable(f"the {kind} is unavailable, retry later"))
        orig = getattr(exc, "orig", None)
        if isinstance(exc, sa_exc.IntegrityError) and isinstance(orig, psycopg.errors.UniqueViolation):
            # A concurrent request wrote the same row first (e.g. one Idempotency-Key sent twice at once).
            detail = ("a request with this Idempotency-Key is being processed; retry to get its run"
                      if "idempotency_key" in str(orig) else "a concurrent request wrote the same record; retry")
            return JSONResponse({"error": "Conflict", "detail": detail}, status_code=409, headers={"Retry-After": "1"})
        if isinstance(exc, sa_exc.DataError) or isinstance(orig, (UnicodeError, ValueError)):
            # A value the database refuses (out of range, unencodable): the input's fault, not ours.
            reason = str(getattr(getattr(orig, "diag", None), "message_primary", None) or orig or exc)
            return JSONResponse({"error": "InvalidRequest", "detail": f"a value was refused by the database: "
                                                                      f"{reason[:300]}"}, status_code=400)
        raise exc

    import redis.exceptions
    from kombu.exceptions import OperationalError as KombuOperationalError

    for cls in (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.DataError, sa_exc.IntegrityError,
                sa_exc.StatementError,
                sa_exc.TimeoutError, psycopg.OperationalError, psycopg.InterfaceError,
                redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, KombuOperationalError):
        app.add_exception_handler(cls, unavailable_or_invalid)


def _mount_frontend(app: FastAPI, dist: Path | None) -> None:
    """Serve the built dashboard; every non-API path falls back to index.html (client routing)."""
    if dist is None:
        dist = Path(__file__).resolve().parents[2] / "frontend" / "dist"
    index = dist / "index.html"
    if not index.is_file():
        return
    if (dist / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=dist / "assets"), name="assets")

    @app.get("/{path:path}", include_in_schema=False)
    def spa(path: str) -> FileResponse:
        if path.startswith("api/"):
            from benchtrail.errors import NotFound
            raise NotFound(f"no API route /{path}")
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and dist.resolve() in candidate.parents:
            return FileResponse(candidate)
        return FileResponse(index)

"""The API process: /api/v1, /api/health, /metrics, the CI client at /cli/benchtrail.py, the built manual at
/docs and the built dashboard at /."""

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
from benchtrail.errors import (AppError, Conflict, ErrorCode, HTTPError, InvalidText, ServiceUnavailable,
                               ValidationFailed, ValueRefused, outage_kind)

REQUESTS = Counter("benchtrail_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram("benchtrail_http_request_seconds", "HTTP request latency", ["method", "route"])


def create_app() -> FastAPI:
    settings = get_settings()
    applog.configure(json=settings.log_json)
    # One access line per request through the structured formatter cost as much as a small read: the
    # API logs its slow and failed requests itself (ObserveMiddleware); uvicorn's access lines are off.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    app = FastAPI(title="Benchtrail", version="0.1.0", openapi_url="/api/openapi.json",
                  docs_url="/api/docs", redoc_url=None, lifespan=_lifespan,
                  swagger_ui_oauth2_redirect_url="/api/docs/oauth2-redirect")
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
    _mount_manual(app, settings.docs_site)
    _mount_frontend(app, settings.frontend_dist)
    return app


@asynccontextmanager
async def _lifespan(_: FastAPI) -> AsyncIterator[None]:
    yield
    from benchtrail.db import close_loop_pool

    await close_loop_pool()


def _domain_routers() -> list:
    from benchtrail.alerts.endpoints import router as alerts_router
    from benchtrail.cli.endpoints import router as client_router
    from benchtrail.plans.execution_endpoints import router as execution_router
    from benchtrail.plans.endpoints import router as plans_router
    from benchtrail.uploads.results_endpoints import router as results_router
    from benchtrail.profiles.endpoints import router as profiles_router
    from benchtrail.runs.endpoints import router as runs_router
    from benchtrail.sharing.endpoints import router as sharing_router
    from benchtrail.trails.endpoints import router as trails_router
    from benchtrail.uploads.endpoints import router as uploads_router

    return [runs_router, uploads_router, plans_router, execution_router, results_router, trails_router, alerts_router,
            sharing_router, client_router, profiles_router]


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
            return error_response(InvalidText(problems))
        return error_response(ValidationFailed(problems))

    _install_edge_error_handlers(app)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        outage = outage_kind(exc)
        if outage is not None:
            # FastAPI answers any failure while reading a form as 400 "error parsing the body", a full disk
            # under the spooled upload included: the cause decides.
            applog.log.warning("unavailable", component=outage, error=str(exc.__cause__ or exc)[:300])
            return error_response(ServiceUnavailable(f"the {outage} is unavailable, retry later"))
        return error_response(HTTPError(exc.status_code, str(exc.detail)))


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
            return JSONResponse(Conflict(detail, code=ErrorCode.CONCURRENT_WRITE).to_dict(), status_code=409,
                                headers={"Retry-After": "1"})
        if isinstance(exc, sa_exc.DataError) or isinstance(orig, (UnicodeError, ValueError)):
            # A value the database refuses (out of range, unencodable): the input's fault, not ours.
            reason = str(getattr(getattr(orig, "diag", None), "message_primary", None) or orig or exc)
            return error_response(ValueRefused(f"a value was refused by the database: {reason[:300]}"))
        raise exc

    import redis.exceptions
    from kombu.exceptions import OperationalError as KombuOperationalError

    for cls in (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.DataError, sa_exc.IntegrityError,
                sa_exc.StatementError,
                sa_exc.TimeoutError, psycopg.OperationalError, psycopg.InterfaceError,
                redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, KombuOperationalError):
        app.add_exception_handler(cls, unavailable_or_invalid)


MANUAL_NOT_BUILT = ("<!doctype html><title>Benchtrail manual</title><h1>The manual is not built</h1>"
                    "<p>Build it with <code>make docs</code> (or <code>infra/scripts/bootstrap.sh</code>), "
                    "then reload: the API serves it from <code>{site}</code> "
                    "(<code>BENCHTRAIL_DOCS_SITE</code>).</p>")


def _mount_manual(app: FastAPI, site: Path | None) -> None:
    """Serve the built manual (MkDocs, `make docs`) at /docs, so it always matches the running version; until
    it is built, /docs says how to build it (never the dashboard's page)."""
    from fastapi.responses import HTMLResponse, RedirectResponse

    if site is None:
        site = Path(__file__).resolve().parents[2] / "site"

    @app.get("/docs", include_in_schema=False)
    def manual_root() -> RedirectResponse:
        return RedirectResponse("/docs/", status_code=308)

    if (site / "index.html").is_file():
        from benchtrail.manual import ManualFiles

        app.mount("/docs", ManualFiles(site), name="manual")
        return

    @app.get("/docs/{path:path}", include_in_schema=False)
    def manual_not_built(path: str) -> HTMLResponse:
        return HTMLResponse(MANUAL_NOT_BUILT.format(site=site), status_code=404)


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

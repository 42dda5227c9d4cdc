"""The API process: /api/v1, /api/health, /metrics, and the built dashboard at /."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from prometheus_client import Counter, Histogram
from starlette.exceptions import HTTPException as StarletteHTTPException

from benchtrail import logging as applog
from benchtrail.config import get_settings
from benchtrail.errors import AppError, PayloadTooLarge

REQUESTS = Counter("benchtrail_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram("benchtrail_http_request_seconds", "HTTP request latency", ["method", "route"])


def create_app() -> FastAPI:
    settings = get_settings()
    applog.configure(json=settings.log_json)
    app = FastAPI(title="Benchtrail", version="0.1.0", openapi_url="/api/openapi.json",
                  docs_url="/api/docs", redoc_url=None)
    _install_error_handlers(app)
    _install_middleware(app)

    from benchtrail.health.endpoints import router as health_router
    from benchtrail.projects.endpoints import router as projects_router

    app.include_router(health_router)
    app.include_router(projects_router)
    for module in _domain_routers():
        app.include_router(module)
    _mount_frontend(app, settings.frontend_dist)
    return app


def _domain_routers() -> list:
    from benchtrail.alerts.endpoints import router as alerts_router
    from benchtrail.execution.endpoints import router as execution_router
    from benchtrail.plans.endpoints import router as plans_router
    from benchtrail.runs.endpoints import router as runs_router
    from benchtrail.trails.endpoints import router as trails_router
    from benchtrail.uploads.endpoints import router as uploads_router

    return [runs_router, uploads_router, plans_router, execution_router, trails_router, alerts_router]


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def app_error(_: Request, exc: AppError) -> JSONResponse:
        return JSONResponse(exc.to_dict(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return JSONResponse({"error": "ValidationError", "detail": problems}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
        return JSONResponse({"error": kind, "detail": str(exc.detail)}, status_code=exc.status_code)


def _install_middleware(app: FastAPI) -> None:
    max_bytes = get_settings().max_upload_mb * 1024 * 1024

    @app.middleware("http")
    async def observe(request: Request, call_next):  # type: ignore[no-untyped-def]
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > max_bytes:
            err = PayloadTooLarge(f"request body of {int(length)} bytes exceeds the limit of "
                                  f"{max_bytes} bytes (BENCHTRAIL_MAX_UPLOAD_MB)")
            return JSONResponse(err.to_dict(), status_code=err.status)
        started = time.perf_counter()
        response = await call_next(request)
        route = getattr(request.scope.get("route"), "path", "unmatched")
        elapsed = time.perf_counter() - started
        REQUESTS.labels(request.method, route, response.status_code).inc()
        LATENCY.labels(request.method, route).observe(elapsed)
        if route.startswith("/api"):
            applog.log.info("request", method=request.method, route=route, status=response.status_code,
                            ms=round(elapsed * 1000, 1))
        return response


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

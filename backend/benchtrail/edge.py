"""The outermost layer of the API (pure ASGI, so it sees every request and every response):

- security headers on every response (CSP allowing only the app's own origin, nosniff,
  frame-ancestors 'none', Referrer-Policy);
- a NUL in an API request's path or query is answered 400 InvalidText naming where (PostgreSQL cannot
  take a NUL in a text value);
- a request body larger than BENCHTRAIL_MAX_UPLOAD_MB is answered 413 before it is read (from
  Content-Length; a chunked body is counted as it streams);
- rate limits per token and per client address on writes and on failed authentication (429 with
  Retry-After), counted in Redis with the `limits` library;
- a lost database or broker connection anywhere below (endpoint, dependency, middleware, before the
  response starts) is answered 503 with Retry-After and the JSON error body; any other unexpected error
  is answered with the JSON error body too (500), never plain text.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from typing import Any
from urllib.parse import parse_qsl

import anyio.to_thread
from limits import parse
from limits.storage import RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchtrail import logging as applog
from benchtrail.config import Settings
from benchtrail.errors import (AppError, InternalError, InvalidText, PayloadTooLarge, ServiceUnavailable,
                               TooManyRequests, outage_kind)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
       "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; "
       "base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
# FastAPI's interactive docs page loads Swagger UI from its CDN and starts it with an inline script.
DOCS_CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
            "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; img-src 'self' data: "
            "https://fastapi.tiangolo.com; object-src 'none'; base-uri 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}
# As they are sent: (name, value) pairs of bytes, added to an answer's own headers once per response.
_RAW_SECURITY = [(name.encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]
_RAW_CSP, _RAW_DOCS_CSP = CSP.encode(), DOCS_CSP.encode()


class _BodyTooLarge(Exception):
    pass


class RateLimits:
    """Per-token and per-address write limits and a per-address failed-authentication limit.
    Fails open: while Redis is unreachable nothing is limited (and that is logged once per 30 s)."""

    RETRY_REDIS_AFTER_S = 5.0

    def __init__(self, settings: Settings) -> None:
        self.enabled = settings.rate_limit_enabled
        self.writes_token = parse(settings.rate_limit_writes_per_token)
        self.writes_address = parse(settings.rate_limit_writes_per_address)
        self.failed_auth = parse(settings.rate_limit_failed_auth_per_address)
        self._storage_url = settings.redis_url
        self._limiter: SlidingWindowCounterRateLimiter | None = None
        self._down_until = 0.0
        self._last_warning = 0.0

    def _get(self) -> SlidingWindowCounterRateLimiter:
        if self._limiter is None:
            storage = RedisStorage(self._storage_url, key_prefix="benchtrail-limits",
                                   socket_connect_timeout=0.5, socket_timeout=0.5)
            self._limiter = SlidingWindowCounterRateLimiter(storage)
        return self._limiter

    def _guard(self, fn: Any, default: Any) -> Any:
        if time.monotonic() < self._down_until:
            return default
        try:
            return fn()
        except Exception as exc:  # Redis down: limits are not enforced, requests still served
            self._down_until = time.monotonic() + self.RETRY_REDIS_AFTER_S
            if time.monotonic() - self._last_warning > 30:
                self._last_warning = time.monotonic()
                applog.log.warning("rate limits not enforced: Redis unreachable", error=str(exc)[:200])
            return default

    def _retry_after(self, item: Any, *ids: str) -> int:
        stats = self._get().get_window_stats(item, *ids)
        return max(1, math.ceil(stats.reset_time - time.time()))

    def check(self, address: str, token: str | None, method: str) -> tuple[int, str] | None:
        """(Retry-After seconds, why) when this request must be refused, else None. Counts writes."""
        if not self.enabled:
            return None

        def work() -> tuple[int, str] | None:
            limiter = self._get()
            if token is not None and not limiter.test(self.failed_auth, "auth", address):
                return (self._retry_after(self.failed_auth, "auth", address),
                        f"too many failed authentications from {address} "
                        f"(limit {self.failed_auth}; BENCHTRAIL_RATE_LIMIT_FAILED_AUTH_PER_ADDRESS)")
            if method not in WRITE_METHODS:
                return None
            if token is not None:
                key = hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:32]
                if not limiter.hit(self.writes_token, "write-token", key):
                    return (self._retry_after(self.writes_token, "write-token", key),
                            f"too many writes with this token (limit {self.writes_token}; "
                            "BENCHTRAIL_RATE_LIMIT_WRITES_PER_TOKEN)")
            if not limiter.hit(self.writes_address, "write-address", address):
                return (self._retry_after(self.writes_address, "write-address", address),
                        f"too many writes from {address} (limit {self.writes_address}; "
                        "BENCHTRAIL_RATE_LIMIT_WRITES_PER_ADDRESS)")
            return None

        return self._guard(work, None)

    def failed_authentication(self, address: str) -> None:
        if self.enabled:
            self._guard(lambda: self._get().hit(self.failed_auth, "auth", address), None)


class EdgeMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.max_bytes = settings.max_upload_mb * 1024 * 1024
        self.max_mb = settings.max_upload_mb
        self.retry_after = settings.outage_retry_after_s
        self.limits = RateLimits(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        csp = _RAW_DOCS_CSP if path == "/api/docs" else _RAW_CSP
        state: dict[str, Any] = {"started": False, "status": None, "too_large": False, "received": 0}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["started"] = True
                state["status"] = message["status"]
                headers = message.setdefault("headers", [])
                if not isinstance(headers, list):
                    headers = message["headers"] = list(headers)
                present = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", csp))
                headers += [item for item in _RAW_SECURITY if item[0] not in present]
            await send(message)

        async def answer(error: AppError, headers: dict[str, str] | None = None) -> None:
            body = json.dumps(error.to_dict()).encode()
            await send_with_headers({"type": "http.response.start", "status": error.status, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items())]})
            await send_with_headers({"type": "http.response.body", "body": body})

        request_headers = Headers(scope=scope)
        length = request_headers.get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_bytes:
            await answer(PayloadTooLarge(f"request body of {int(length)} bytes exceeds the limit of {self.max_bytes} "
                                         f"bytes ({self.max_mb} MB, BENCHTRAIL_MAX_UPLOAD_MB)"), {"connection": "close"})
            return

        if path.startswith("/api/"):
            nul = _nul_in(path, scope.get("query_string", b""))
            if nul is not None:
                await answer(InvalidText(nul))
                return

        address = (scope.get("client") or ("unknown", 0))[0] or "unknown"
        token = _bearer(request_headers.get("authorization"))
        method = scope.get("method", "")
        # An anonymous read is never limited: no Redis round trip (nor thread hop) for it.
        if path.startswith("/api/") and self.limits.enabled and (token is not None or method in WRITE_METHODS):
            refused = await anyio.to_thread.run_sync(self.limits.check, address, token, method)
            if refused is not None:
                retry_after, why = refused
                await answer(TooManyRequests(why), {"retry-after": str(retry_after)})
                return

        async def counted_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > self.max_bytes:
                    state["too_large"] = True
                    raise _BodyTooLarge()
            return message

        async def guarded_send(message: Message) -> None:
            if state["too_large"] and not state["started"]:
                return  # whatever the app answers to a body cut short, the answer is 413
            await send_with_headers(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception as exc:
            if state["started"]:
                if outage_kind(exc):
                    applog.log.warning("connection lost while streaming a response", path=path, error=str(exc)[:200])
                    return
                raise
            if state["too_large"]:
                await self._answer_too_large(answer)
                return
            kind = outage_kind(exc)
            if kind is not None:
                applog.log.warning("unavailable", path=path, component=kind, error=str(exc)[:300])
                await answer(ServiceUnavailable(f"the {kind} is unavailable, retry later"),
                             {"retry-after": str(self.retry_after)})
                return
            await answer(InternalError("unexpected server error (logged)"))
            raise
        if state["too_large"] and not state["started"]:
            await self._answer_too_large(answer)
            return
        if state["status"] == 401 and token is not None and path.startswith("/api/"):
            await anyio.to_thread.run_sync(self.limits.failed_authentication, address)

    async def _answer_too_large(self, answer: Any) -> None:
        await answer(PayloadTooLarge(f"request body exceeds the limit of {self.max_bytes} bytes "
                                     f"({self.max_mb} MB, BENCHTRAIL_MAX_UPLOAD_MB)"), {"connection": "close"})


def _nul_in(path: str, query: bytes) -> str | None:
    """Where a NUL is in a request's (decoded) path or its query parameters, else None. The raw query
    is searched first: a parameter holds a NUL only if the query has a %00 (or a NUL byte itself)."""
    if "\x00" in path:
        return f"path: contains a NUL byte at character {path.index(chr(0))}"
    if b"%00" not in query and b"\x00" not in query:
        return None
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True, encoding="utf-8",
                                 errors="replace"):
        if "\x00" in name:
            return f"query parameter name '{name.replace(chr(0), '')}': contains a NUL byte"
        if "\x00" in value:
            return f"query parameter '{name}': contains a NUL byte at character {value.index(chr(0))}"
    return None


def _bearer(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else header

"""Typed application errors. Every expected failure is an AppError and renders as
{"error": "<Kind>", "detail": "..."} with its status; nothing expected is ever a 500."""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    status: int = 400
    kind: str = "BadRequest"

    def __init__(self, detail: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra or {}

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.kind, "detail": self.detail, **self.extra}


class Unauthorized(AppError):
    status, kind = 401, "Unauthorized"


class Forbidden(AppError):
    status, kind = 403, "Forbidden"


class NotFound(AppError):
    status, kind = 404, "NotFound"


class Conflict(AppError):
    status, kind = 409, "Conflict"


class PayloadTooLarge(AppError):
    status, kind = 413, "PayloadTooLarge"


class InvalidResultFile(AppError):
    """A result file we refuse; names the file, line, field and reason."""

    status, kind = 400, "InvalidResultFile"

    def __init__(self, filename: str, reason: str, *, line: int | None = None,
                 field: str | None = None) -> None:
        where = [f"file '{filename}'"]
        if line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {reason}",
                         extra={"file": filename, "line": line, "field": field, "reason": reason})


class InvalidRequest(AppError):
    status, kind = 422, "InvalidRequest"


class ServiceUnavailable(AppError):
    status, kind = 503, "ServiceUnavailable"


class InvalidText(AppError):
    """A string that cannot be stored (NUL, unpaired surrogate, control character); names the field."""

    status, kind = 400, "InvalidText"


class TooManyRequests(AppError):
    status, kind = 429, "TooManyRequests"


# Statuses any /api operation can answer from the edge (benchtrail.edge and the handlers in app.py),
# whatever the operation: declare them on every operation of the OpenAPI document. Each body is
# {"error": <kind>, "detail": <why>}; 429 and 503 carry a Retry-After header (seconds).
EDGE_RESPONSES: dict[int, str] = {
    400: "Invalid input: unstorable text (NUL, unpaired surrogate, control character) naming the field, "
         "or a value the database refuses",
    413: "Request body larger than BENCHTRAIL_MAX_UPLOAD_MB (refused before the body is read)",
    429: "Rate limit exceeded (writes per token/address, or failed authentications); see Retry-After",
    503: "Database or broker unavailable; retry after Retry-After seconds",
}
RETRY_AFTER_STATUSES = frozenset({429, 503})


def outage_kind(exc: BaseException) -> str | None:
    """'database' or 'broker' when `exc` (or what it wraps) is a lost connection to PostgreSQL or
    Redis; None for anything else. Such errors are answered 503 with Retry-After, never 500."""
    import psycopg
    import sqlalchemy.exc as sa_exc
    from kombu.exceptions import OperationalError as KombuOperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (sa_exc.OperationalError, sa_exc.InterfaceError)):
            return "database"
        if isinstance(current, sa_exc.DBAPIError) and current.connection_invalidated:
            return "database"
        if isinstance(current, (psycopg.OperationalError, psycopg.InterfaceError)):
            return "database"
        if isinstance(current, sa_exc.TimeoutError):  # connection pool exhausted while reconnecting
            return "database"
        if isinstance(current, (RedisConnectionError, RedisTimeoutError, KombuOperationalError)):
            return "broker"
        current = current.__cause__ or current.__context__
    return None

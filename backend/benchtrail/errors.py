"""Typed application errors. Every expected failure is an AppError and renders as
{"error": "<Kind>", "detail": "..."} with its status; nothing expected is ever a 500."""

from __future__ import annotations

import errno
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


class InvalidBody(AppError):
    """A body that cannot be read at all (a malformed multipart form)."""

    status, kind = 400, "InvalidBody"


class ServiceUnavailable(AppError):
    status, kind = 503, "ServiceUnavailable"


class InvalidText(AppError):
    """A string that cannot be stored (NUL, unpaired surrogate, control character); names the field."""

    status, kind = 400, "InvalidText"


class TooManyRequests(AppError):
    status, kind = 429, "TooManyRequests"


# A file write or read the disk refused (full, over quota, over a size limit, failing, remounted read-only):
# the server's fault and, once an operator freed or fixed it, gone; never the request's.
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


def outage_kind(exc: BaseException) -> str | None:
    """'database', 'broker' or 'storage' when `exc` (or what it wraps) is a lost connection to
    PostgreSQL or Redis or a disk that refused a file (`STORAGE_ERRNOS`); None for anything else.
    Such errors are answered 503 with Retry-After, never 500 (nor 400)."""
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
        if isinstance(current, OSError) and current.errno in STORAGE_ERRNOS:
            return "storage"
        current = current.__cause__ or current.__context__
    return None

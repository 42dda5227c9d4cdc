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

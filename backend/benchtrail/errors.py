"""Typed application errors. Every expected failure is an AppError and renders as
{"error": "<Kind>", "code": "<rule>", "detail": "..."} with its status; nothing expected is ever a 500.

`error` is the broad kind (NotFound, Conflict, InvalidRequest, ...); `code` names the one rule that refused
the request, from `ErrorCode`, so a client can act on it without reading the text; `detail` says it in
words, naming the field, file or line. The OpenAPI document lists every code with its meaning."""

from __future__ import annotations

import errno
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Why a request is refused: one code per rule. Each member's meaning is in CODE_MEANINGS."""

    # 400
    INVALID_BODY = "invalid_body"
    INVALID_TEXT = "invalid_text"
    INVALID_RESULT_FILE = "invalid_result_file"
    VALUE_REFUSED_BY_DATABASE = "value_refused_by_database"
    HTTP_ERROR = "http_error"
    # 401
    TOKEN_MISSING = "token_missing"
    TOKEN_MALFORMED = "token_malformed"
    TOKEN_INVALID = "token_invalid"
    RUNNER_TOKEN_REQUIRED = "runner_token_required"
    # 403
    ROLE_REQUIRED = "role_required"
    SITE_ADMIN_REQUIRED = "site_admin_required"
    RUNNER_TOKEN_ONLY_RUNS = "runner_token_only_runs"
    NOT_A_RUNNER_TOKEN = "not_a_runner_token"
    POOL_NOT_ALLOWED = "pool_not_allowed"
    NOT_CLAIMED_BY_TOKEN = "not_claimed_by_token"
    # 404, 405
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    # 409
    PROJECT_EXISTS = "project_exists"
    ILLEGAL_TRANSITION = "illegal_transition"
    RUN_NOT_QUEUED = "run_not_queued"
    RUN_NOT_RUNNING = "run_not_running"
    RUN_NOT_CANCELLABLE = "run_not_cancellable"
    RUN_NOT_COMPLETED = "run_not_completed"
    SHARE_NOT_QUEUED = "share_not_queued"
    SHARE_NOT_RUNNING = "share_not_running"
    SAME_RUNNER = "same_runner"
    RESULTS_NOT_ACCEPTED = "results_not_accepted"
    RESULTS_ALREADY_RECEIVED = "results_already_received"
    CHUNK_OFFSET_AHEAD = "chunk_offset_ahead"
    UPLOAD_INCOMPLETE = "upload_incomplete"
    UPLOAD_DAMAGED = "upload_damaged"
    CONCURRENT_WRITE = "concurrent_write"
    # 413
    PAYLOAD_TOO_LARGE = "payload_too_large"
    # 422
    VALIDATION = "validation"
    METADATA_NOT_JSON = "metadata_not_json"
    METADATA_INVALID = "metadata_invalid"
    FILE_COUNT_MISMATCH = "file_count_mismatch"
    REFERENCE_NOT_A_VARIANT = "reference_not_a_variant"
    CRITERION_VARIANT_UNKNOWN = "criterion_variant_unknown"
    CRITERION_NEEDS_TWO_VARIANTS = "criterion_needs_two_variants"
    FORM_FIELD_MISSING = "form_field_missing"
    FORM_FIELD_REPEATED = "form_field_repeated"
    FORM_TOO_MANY_PARTS = "form_too_many_parts"
    FORM_FIELD_TOO_LONG = "form_field_too_long"
    UPLOAD_CUT_OFF = "upload_cut_off"
    CHUNK_PAST_END = "chunk_past_end"
    PLAN_INVALID = "plan_invalid"
    PLAN_SECRET_PLACEHOLDER = "plan_secret_placeholder"
    CRON_INVALID = "cron_invalid"
    METRIC_UNKNOWN = "metric_unknown"
    TOKEN_ROLE_UNKNOWN = "token_role_unknown"
    RUNNER_TOKEN_SITE_WIDE = "runner_token_site_wide"
    POOLS_ONLY_FOR_RUNNERS = "pools_only_for_runners"
    POOLS_EMPTY = "pools_empty"
    ALERT_STATE_UNKNOWN = "alert_state_unknown"
    ALERT_STATE_SET_BY_ANALYSIS = "alert_state_set_by_analysis"
    ANNOTATION_NOT_PLACED = "annotation_not_placed"
    WEBHOOK_URL_INVALID = "webhook_url_invalid"
    WEBHOOK_NOT_ALLOWED = "webhook_not_allowed"
    LABEL_FILTER_INVALID = "label_filter_invalid"
    PERCENTILE_OUT_OF_RANGE = "percentile_out_of_range"
    SHARE_NOT_SPLIT = "share_not_split"
    SHARE_REQUIRED = "share_required"
    PROFILE_AGAINST_ITSELF = "profile_against_itself"
    PROFILE_NOT_NORMALISED = "profile_not_normalised"
    # 429, 503
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    # 500
    INTERNAL = "internal"


CODE_MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_BODY: "the body cannot be read at all (malformed multipart form or JSON)",
    ErrorCode.INVALID_TEXT: "a string holds a NUL byte, an unpaired surrogate or a control character "
                            "(PostgreSQL cannot store it); the detail names the field",
    ErrorCode.INVALID_RESULT_FILE: "a result file is refused; `file`, `line`, `field` and `reason` say where and why",
    ErrorCode.VALUE_REFUSED_BY_DATABASE: "a value the database refuses (out of its range or encoding)",
    ErrorCode.HTTP_ERROR: "a request the HTTP layer refuses before any route reads it",
    ErrorCode.TOKEN_MISSING: "this operation needs a bearer token and none was sent",
    ErrorCode.TOKEN_MALFORMED: "the Authorization header is not 'Bearer <token>'",
    ErrorCode.TOKEN_INVALID: "the token is unknown or revoked",
    ErrorCode.RUNNER_TOKEN_REQUIRED: "claiming or reporting a run needs a runner token",
    ErrorCode.ROLE_REQUIRED: "the token lacks the role this operation needs on the project",
    ErrorCode.SITE_ADMIN_REQUIRED: "this operation needs a site admin token",
    ErrorCode.RUNNER_TOKEN_ONLY_RUNS: "a runner token may only claim and report plan runs",
    ErrorCode.NOT_A_RUNNER_TOKEN: "only a runner token claims or reports a run",
    ErrorCode.POOL_NOT_ALLOWED: "the runner token is scoped to other pools than the run's",
    ErrorCode.NOT_CLAIMED_BY_TOKEN: "the run (or share) was claimed by another runner token",
    ErrorCode.NOT_FOUND: "no such resource, or a private one this token may not see",
    ErrorCode.METHOD_NOT_ALLOWED: "the path exists but not with this method",
    ErrorCode.PROJECT_EXISTS: "a project with this slug exists",
    ErrorCode.ILLEGAL_TRANSITION: "the run's lifecycle does not allow this status change (`from`, `to`)",
    ErrorCode.RUN_NOT_QUEUED: "only a queued run can be started, and never twice",
    ErrorCode.RUN_NOT_RUNNING: "the run is not queued or running any more",
    ErrorCode.RUN_NOT_CANCELLABLE: "only a queued or running run can be cancelled",
    ErrorCode.RUN_NOT_COMPLETED: "only a completed run can be measured again or excluded",
    ErrorCode.SHARE_NOT_QUEUED: "only a queued share of a run can be started, and never twice",
    ErrorCode.SHARE_NOT_RUNNING: "results of a share are accepted only while it runs",
    ErrorCode.SAME_RUNNER: "this runner already runs another share of the run; each share needs its own runner",
    ErrorCode.RESULTS_NOT_ACCEPTED: "results are accepted only from the runner running the run (or once, late, "
                                    "after it failed without results)",
    ErrorCode.RESULTS_ALREADY_RECEIVED: "the run has its results already (under another Idempotency-Key)",
    ErrorCode.CHUNK_OFFSET_AHEAD: "a chunk starts past the bytes the server holds; `offset` says where to resume",
    ErrorCode.UPLOAD_INCOMPLETE: "a resumable upload is committed before all its bytes arrived; `offset` says "
                                 "where to resume",
    ErrorCode.UPLOAD_DAMAGED: "the stored chunks of a resumable upload do not add up; upload it again",
    ErrorCode.CONCURRENT_WRITE: "a concurrent request wrote the same record first (e.g. one Idempotency-Key "
                                "twice at once); retry after Retry-After",
    ErrorCode.PAYLOAD_TOO_LARGE: "the body or a file exceeds BENCHTRAIL_MAX_UPLOAD_MB (or the chunk limit)",
    ErrorCode.VALIDATION: "a value outside the constraints this document declares",
    ErrorCode.METADATA_NOT_JSON: "the upload's `metadata` field is not valid JSON",
    ErrorCode.METADATA_INVALID: "the upload's metadata does not match its schema; the detail names the field",
    ErrorCode.FILE_COUNT_MISMATCH: "metadata.files has another number of entries than the files sent",
    ErrorCode.REFERENCE_NOT_A_VARIANT: "the reference is not one of the uploaded variants",
    ErrorCode.CRITERION_VARIANT_UNKNOWN: "a criterion names a variant no file has",
    ErrorCode.CRITERION_NEEDS_TWO_VARIANTS: "an overhead criterion needs a reference and another variant",
    ErrorCode.FORM_FIELD_MISSING: "a required field of the multipart form is missing",
    ErrorCode.FORM_FIELD_REPEATED: "a field of the multipart form was sent more than once",
    ErrorCode.FORM_TOO_MANY_PARTS: "the multipart form has too many parts",
    ErrorCode.FORM_FIELD_TOO_LONG: "a text field of the multipart form is too long",
    ErrorCode.UPLOAD_CUT_OFF: "the upload or chunk ended before its declared end; nothing of it was kept",
    ErrorCode.CHUNK_PAST_END: "a chunk ends past the upload's declared size",
    ErrorCode.PLAN_INVALID: "the plan does not match its schema; the detail names each field and why",
    ErrorCode.PLAN_SECRET_PLACEHOLDER: "a plan header says '***' (a stored secret) where no value is stored",
    ErrorCode.CRON_INVALID: "a schedule's cron expression is not valid (5 fields)",
    ErrorCode.METRIC_UNKNOWN: "the metric is not one this view offers; the detail names those it does",
    ErrorCode.TOKEN_ROLE_UNKNOWN: "a token's role is not one of viewer, uploader, admin, runner",
    ErrorCode.RUNNER_TOKEN_SITE_WIDE: "runner tokens are site-wide; create them without a project",
    ErrorCode.POOLS_ONLY_FOR_RUNNERS: "only a runner token is scoped to pools",
    ErrorCode.POOLS_EMPTY: "a pool scope needs one or more pool names, none empty",
    ErrorCode.ALERT_STATE_UNKNOWN: "not one of the alert states",
    ErrorCode.ALERT_STATE_SET_BY_ANALYSIS: "this alert state is set by the analysis, not by people",
    ErrorCode.ANNOTATION_NOT_PLACED: "an annotation needs an agent_version or a time to place it",
    ErrorCode.WEBHOOK_URL_INVALID: "a webhook URL is not an http(s) URL with a host and a valid port",
    ErrorCode.WEBHOOK_NOT_ALLOWED: "a webhook's destination is not in BENCHTRAIL_WEBHOOK_ALLOWLIST",
    ErrorCode.LABEL_FILTER_INVALID: "a label filter is not key:value",
    ErrorCode.PERCENTILE_OUT_OF_RANGE: "a percentile outside 0..100",
    ErrorCode.SHARE_NOT_SPLIT: "the run runs on one generator: it has no shares",
    ErrorCode.SHARE_REQUIRED: "the run is split into shares: name one (?share=)",
    ErrorCode.PROFILE_AGAINST_ITSELF: "a differential profile of a variant against itself: name another variant, or a "
                                      "base run",
    ErrorCode.PROFILE_NOT_NORMALISED: "a profile's step has no request count to normalise it by (no sample file)",
    ErrorCode.RATE_LIMITED: "too many writes or failed authentications; retry after Retry-After",
    ErrorCode.UNAVAILABLE: "the database, the broker or the raw file store is unavailable; retry after Retry-After",
    ErrorCode.INTERNAL: "an unexpected error of the server (logged); never an answer to a request's content",
}


class AppError(Exception):
    status: int = 400
    kind: str = "BadRequest"
    code: ErrorCode | None = None   # the kind's one rule; kinds of many rules (409, 422, 403) have none

    def __init__(self, detail: str, *, code: ErrorCode | None = None, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = code or type(self).code
        if self.code is None:
            raise TypeError(f"{type(self).__name__}({detail!r}) needs code=: the rule that refuses the request")
        self.extra = extra or {}

    def to_dict(self) -> dict[str, Any]:
        assert self.code is not None
        return {"error": self.kind, "code": self.code.value, "detail": self.detail, **self.extra}


class Unauthorized(AppError):
    status, kind, code = 401, "Unauthorized", ErrorCode.TOKEN_MISSING


class Forbidden(AppError):
    """The token may not do this; every raise names its rule (`code=`)."""

    status, kind = 403, "Forbidden"


class NotFound(AppError):
    status, kind, code = 404, "NotFound", ErrorCode.NOT_FOUND


class Conflict(AppError):
    """A state that refuses the request; every raise names its rule (`code=`)."""

    status, kind = 409, "Conflict"


class PayloadTooLarge(AppError):
    status, kind, code = 413, "PayloadTooLarge", ErrorCode.PAYLOAD_TOO_LARGE


class InvalidResultFile(AppError):
    """A result file we refuse; names the file, line, field and reason."""

    status, kind, code = 400, "InvalidResultFile", ErrorCode.INVALID_RESULT_FILE

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
    """A request the server refuses for a rule no schema states; every raise names its rule (`code=`)."""

    status, kind = 422, "InvalidRequest"


class InvalidBody(AppError):
    """A body that cannot be read at all (a malformed multipart form)."""

    status, kind, code = 400, "InvalidBody", ErrorCode.INVALID_BODY


class ServiceUnavailable(AppError):
    status, kind, code = 503, "ServiceUnavailable", ErrorCode.UNAVAILABLE


class InvalidText(AppError):
    """A string that cannot be stored (NUL, unpaired surrogate, control character); names the field."""

    status, kind, code = 400, "InvalidText", ErrorCode.INVALID_TEXT


class TooManyRequests(AppError):
    status, kind, code = 429, "TooManyRequests", ErrorCode.RATE_LIMITED


class ValueRefused(AppError):
    """A value the database refuses (out of its range, not encodable): the input's fault, not ours."""

    status, kind, code = 400, "InvalidRequest", ErrorCode.VALUE_REFUSED_BY_DATABASE


class InternalError(AppError):
    """What the edge answers when the app failed unexpectedly (the failure itself is logged)."""

    status, kind, code = 500, "InternalError", ErrorCode.INTERNAL


class ValidationFailed(AppError):
    """A value outside the constraints the OpenAPI document declares (FastAPI's request validation)."""

    status, kind, code = 422, "ValidationError", ErrorCode.VALIDATION


class HTTPError(AppError):
    """What the HTTP layer refuses before a route reads the request (no route, a wrong method, ...)."""

    kind, code = "HTTPError", ErrorCode.HTTP_ERROR

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        if status == 404:
            self.kind, self.code = "NotFound", ErrorCode.NOT_FOUND
        elif status == 405:
            self.kind, self.code = "MethodNotAllowed", ErrorCode.METHOD_NOT_ALLOWED


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

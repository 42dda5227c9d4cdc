"""A small HTTP client for the Benchtrail API, used by runners (and tests). CI jobs and people use the one-file
client the server serves (`benchtrail.cli.client`), which needs no package at all."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import httpx


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{status} {body.get('error', 'Error')}: {body.get('detail', body)}")


def new_idempotency_key() -> str:
    return f"cli-{uuid.uuid4()}"


class _CountingReader:
    """Wraps a file so a progress callback sees the bytes as httpx streams them."""

    def __init__(self, fh: BinaryIO, on_read: Callable[[int], None]) -> None:
        self._fh = fh
        self._on_read = on_read

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        self._on_read(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


# Answers that mean "not now": the server is restarting, its database or broker is down, or we are
# over a rate limit. A 409 with Retry-After is a concurrent request with the same Idempotency-Key.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 30.0


def backoff_delay(attempt: int, retry_after: float | None, remaining: float) -> float:
    """Exponential backoff with jitter (half to all of 1, 2, 4 ... 30 s), at least what the server asked
    for in Retry-After, never past the retry deadline."""
    exp = min(BACKOFF_MAX_S, BACKOFF_START_S * 2 ** attempt)
    delay = random.uniform(exp / 2, exp)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return max(0.0, min(delay, remaining))


def _retry_after(r: httpx.Response) -> float | None:
    value = r.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _why(r: httpx.Response) -> str:
    try:
        body = r.json()
        return f"{r.status_code} {body.get('error', '')}: {body.get('detail', '')}".strip()
    except ValueError:
        return f"{r.status_code} {r.reason_phrase}"


class Client:
    """`retry_timeout` > 0: requests answered 429/502/503/504 (or 409 with Retry-After), connection errors
    and timeouts are retried with exponential backoff until that many seconds have passed since the
    first attempt; `on_wait(message)` is told what each wait is for."""

    def __init__(self, url: str, token: str | None, timeout: float = 300.0, retry_timeout: float = 0.0,
                 on_wait: Callable[[str], None] | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)
        self.retry_timeout = retry_timeout
        self.on_wait = on_wait or (lambda _message: None)

    def request(self, method: str, path: str, make: Callable[[], dict[str, Any]] | None = None,
                **kwargs: Any) -> httpx.Response:
        """One request, retried as described on the class. `make()` builds fresh keyword arguments
        for each attempt (e.g. reopened files); its result may hold a 'close' callable."""
        deadline = time.monotonic() + self.retry_timeout
        attempt = 0
        while True:
            args = dict(kwargs)
            cleanup = None
            if make is not None:
                built = make()
                cleanup = built.pop("close", None)
                args.update(built)
            error: Exception | None = None
            try:
                response = self.http.request(method, path, **args)
            except httpx.TransportError as exc:  # refused, reset, DNS, timeouts
                response, error = None, exc
            finally:
                if cleanup is not None:
                    cleanup()
            if response is not None:
                retry_after = _retry_after(response)
                if response.status_code not in RETRY_STATUSES and not (
                        response.status_code == 409 and retry_after is not None):
                    return response
                why = _why(response)
            else:
                retry_after = None
                why = f"{type(error).__name__}: {error}"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if response is not None:
                    return response
                raise error  # type: ignore[misc]
            delay = backoff_delay(attempt, retry_after, remaining)
            self.on_wait(f"{method} {path}: {why}; retrying in {delay:.1f} s "
                         f"(attempt {attempt + 1}, giving up in {remaining:.0f} s)")
            time.sleep(delay)
            attempt += 1

    def _check(self, r: httpx.Response) -> Any:
        if r.status_code >= 400:
            try:
                body = r.json()
            except ValueError:
                body = {"error": "HTTPError", "detail": r.text[:500]}
            raise ApiError(r.status_code, body)
        return r.json()

    def get(self, path: str, **params: Any) -> Any:
        return self._check(self.request("GET", path, params={k: v for k, v in params.items() if v is not None}))

    def post(self, path: str, json: Any, headers: dict[str, str] | None = None,
             params: dict[str, Any] | None = None) -> Any:
        return self._check(self.request("POST", path, json=json, headers=headers, params=params))

    def put(self, path: str, json: Any) -> Any:
        return self._check(self.request("PUT", path, json=json))

    def delete(self, path: str) -> Any:
        return self._check(self.request("DELETE", path))

    def upload(self, project: str, metadata: str, files: list[Path], idempotency_key: str | None,
               on_progress: Callable[[int], None] | None = None) -> Any:
        """One run from `files`. Always sent with an Idempotency-Key (a new one when none is given), so a
        retried upload whose first answer was lost still makes exactly one run."""
        headers = {"Idempotency-Key": idempotency_key or new_idempotency_key()}
        return self.post_files(f"/api/v1/projects/{project}/runs", metadata, files, headers, on_progress)

    def post_files(self, path: str, metadata: str, files: list[Path], headers: dict[str, str] | None = None,
                   on_progress: Callable[[int], None] | None = None) -> Any:
        """Multipart POST of `metadata` and files, streamed from disk (reopened for each attempt)."""

        def make() -> dict[str, Any]:
            handles = [p.open("rb") for p in files]
            parts = [("files", (p.name, _CountingReader(h, on_progress) if on_progress else h,
                                "application/octet-stream")) for p, h in zip(files, handles)]

            def close() -> None:
                for h in handles:
                    h.close()

            return {"files": parts, "close": close}

        return self._check(self.request("POST", path, make, data={"metadata": metadata}, headers=headers))

    def wait_for_run(self, slug: str, timeout: float,
                     until: Callable[[dict[str, Any]], bool] | None = None, what: str = "to finish",
                     interval: float = 1.0) -> Any:
        """Poll the run until `until(run)` holds (default: it has ended); TimeoutError after `timeout`.
        Polls every 0.1 s at first, then less often, up to every `interval` seconds: a short ingest is seen
        as soon as it ends, a long one is not polled ten times a second."""
        done = until or (lambda run: run["status"] in ("completed", "failed", "cancelled"))
        deadline = time.monotonic() + timeout
        delay = min(0.1, interval)
        while True:
            run = self.get(f"/api/v1/runs/{slug}")
            if done(run):
                return run
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {slug}: still waiting {what} after {timeout:.0f} s "
                                   f"(status '{run['status']}')")
            time.sleep(delay)
            delay = min(delay * 1.5, interval)

"""A small HTTP client for the Benchtrail API, used by the CLI (and by runners)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import httpx


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{status} {body.get('error', 'Error')}: {body.get('detail', body)}")


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


class Client:
    def __init__(self, url: str, token: str | None, timeout: float = 300.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=url.rstrip("/"), headers=headers, timeout=timeout)

    def _check(self, r: httpx.Response) -> Any:
        if r.status_code >= 400:
            try:
                body = r.json()
            except ValueError:
                body = {"error": "HTTPError", "detail": r.text[:500]}
            raise ApiError(r.status_code, body)
        return r.json()

    def get(self, path: str, **params: Any) -> Any:
        return self._check(self.http.get(path, params={k: v for k, v in params.items() if v is not None}))

    def post(self, path: str, json: Any) -> Any:
        return self._check(self.http.post(path, json=json))

    def upload(self, project: str, metadata: str, files: list[Path], idempotency_key: str | None,
               on_progress: Callable[[int], None] | None = None) -> Any:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self.post_files(f"/api/v1/projects/{project}/runs", metadata, files, headers, on_progress)

    def post_files(self, path: str, metadata: str, files: list[Path], headers: dict[str, str] | None = None,
                   on_progress: Callable[[int], None] | None = None) -> Any:
        """Multipart POST of `metadata` and files, streamed from disk."""
        handles = [p.open("rb") for p in files]
        try:
            parts = [("files", (p.name, _CountingReader(h, on_progress) if on_progress else h,
                                "application/octet-stream")) for p, h in zip(files, handles)]
            return self._check(self.http.post(path, data={"metadata": metadata}, files=parts, headers=headers))
        finally:
            for h in handles:
                h.close()

    def wait_for_run(self, slug: str, timeout: float,
                     until: Callable[[dict[str, Any]], bool] | None = None, what: str = "to finish",
                     interval: float = 0.5) -> Any:
        """Poll the run until `until(run)` holds (default: it has ended); TimeoutError after `timeout`."""
        done = until or (lambda run: run["status"] in ("completed", "failed", "cancelled"))
        deadline = time.monotonic() + timeout
        while True:
            run = self.get(f"/api/v1/runs/{slug}")
            if done(run):
                return run
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {slug}: still waiting {what} after {timeout:.0f} s "
                                   f"(status '{run['status']}')")
            time.sleep(interval)

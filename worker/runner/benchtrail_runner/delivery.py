"""Getting a finished load test's raw outputs to the API without losing them.

`package` compresses every output with zstd into `<workdir>/upload/` and writes `upload.json` next to
them (the run, the results metadata, the files with their sha256, and one Idempotency-Key for these
results). `send` delivers them through a resumable upload (`/api/v1/runs/<slug>/results/uploads`): the
package in chunks of BENCHTRAIL_RUNNER_UPLOAD_CHUNK_BYTES (8 MB) to a session the API keeps under the
Idempotency-Key, resumed from the server's offset after a cut, then committed. Connection failures,
timeouts and 429/502/503/504 answers are retried with exponential back-off for
`BENCHTRAIL_RUNNER_UPLOAD_RETRY_S`: the API stores results in one transaction (all files or none) and
answers a commit it has already done with `duplicate`, so a retry whose answer was lost never stores twice.

Until the API acknowledges the upload the package stays on disk; if the runner gives up, an operator
re-sends it from the runner host with

    python -m benchtrail_runner.delivery <workdir>/upload

(same environment as the runner: BENCHTRAIL_API_URL and BENCHTRAIL_RUNNER_TOKEN).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

import httpx

from .client import RETRY_STATUSES, ApiError, Client, _why, backoff_delay

MANIFEST = "upload.json"
ZSTD_LEVEL = 3          # ~10x on JTL/CSV/NDJSON at hundreds of MB/s: packaging stays short
_CHUNK = 1 << 20
CHUNK_BYTES = 8 << 20   # one request of a resumable results upload


class NotDelivered(Exception):
    """The results were not acknowledged; the package is kept at `directory`."""

    def __init__(self, directory: Path, why: str) -> None:
        self.directory = directory
        self.why = why
        super().__init__(f"results not delivered ({why}); kept in {directory}: re-send with "
                         f"`python -m benchtrail_runner.delivery {directory}`")


@dataclass(frozen=True)
class Package:
    directory: Path
    slug: str
    idempotency_key: str
    metadata: dict[str, Any]
    files: list[Path]
    raw_bytes: int
    packed_bytes: int
    share: int | None = None     # the share of a run over several generators (0-based)

    @classmethod
    def load(cls, directory: Path) -> "Package":
        """Read a kept package back, checking every file against the sha256 recorded when it was made."""
        manifest = json.loads((directory / MANIFEST).read_text())
        files = []
        for entry in manifest["files"]:
            path = directory / entry["name"]
            if not path.is_file():
                raise ValueError(f"{directory / MANIFEST}: file '{entry['name']}' is missing")
            if _sha256(path) != entry["sha256"]:
                raise ValueError(f"{path}: sha256 differs from the one recorded in {MANIFEST}; "
                                 f"the kept file was changed or damaged")
            files.append(path)
        return cls(directory, manifest["run"], manifest["idempotency_key"], manifest["metadata"], files,
                   int(manifest["raw_bytes"]), sum(p.stat().st_size for p in files), manifest.get("share"))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def package(slug: str, metadata: dict[str, Any], outputs: list[Path], directory: Path,
            share: int | None = None) -> Package:
    """Compress `outputs` (in order) into `directory` and record what to send; the manifest is written
    last (through a rename), so a directory with a manifest always holds a complete package — after a
    crash of the host too: every file is synced before the manifest is renamed, the rename before this
    returns."""
    directory.mkdir(parents=True, exist_ok=True)
    compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    files, entries, raw = [], [], 0
    for i, src in enumerate(outputs):
        # A position prefix keeps names unique (every variant's output may have the same name).
        dst = directory / f"{i:03d}-{src.name}.zst"
        with src.open("rb") as fin, dst.open("wb") as fout:
            compressor.copy_stream(fin, fout, size=src.stat().st_size)
            fout.flush()
            os.fsync(fout.fileno())
        raw += src.stat().st_size
        files.append(dst)
        entries.append({"name": dst.name, "sha256": _sha256(dst), "size": dst.stat().st_size,
                        "raw_size": src.stat().st_size})
    key = f"runner-{slug}-{uuid.uuid4()}"
    manifest = {"run": slug, "idempotency_key": key, "metadata": metadata, "files": entries, "raw_bytes": raw,
                "share": share}
    tmp = directory / f".{MANIFEST}.tmp"
    with tmp.open("w") as out:
        out.write(json.dumps(manifest, indent=1))
        out.flush()
        os.fsync(out.fileno())
    tmp.replace(directory / MANIFEST)
    for path in (directory, directory.parent):   # the manifest's name, and the folder's (made above)
        folder = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return Package(directory, slug, key, metadata, files, raw, sum(e["size"] for e in entries), share)


def send(pkg: Package, api_url: str, token: str | None, retry_s: float,
         on_wait: Callable[[str], None] | None = None, timeout: float = 600.0,
         chunk_bytes: int = CHUNK_BYTES) -> dict[str, Any]:
    """Deliver the package through a resumable upload until the API acknowledges it (202, or 200
    `duplicate`); NotDelivered when `retry_s` ran out or the API refused the results (e.g. the run is no
    longer running, or has other results).

    The package (its files' bytes one after the other) goes in chunks of `chunk_bytes` to an upload session
    the API keeps under this package's Idempotency-Key: after a cut, the runner asks the server how many
    bytes it holds and resumes from there; a kept package re-sent later finds its session again. The
    commit stores the results exactly once."""
    client = Client(api_url, token, timeout=timeout, retry_timeout=retry_s, on_wait=on_wait)
    wait = on_wait or (lambda _message: None)
    deadline = time.monotonic() + retry_s

    def remaining() -> float:
        client.retry_timeout = max(0.0, deadline - time.monotonic())
        return client.retry_timeout

    base = f"/api/v1/runs/{pkg.slug}/results/uploads"
    share = {"share": pkg.share} if pkg.share is not None else {}   # a share of a run over several generators
    try:
        remaining()
        files = [{"name": p.name, "size": p.stat().st_size, "sha256": _sha256(p)} for p in pkg.files]
        upload = client._check(client.request("POST", base, json={"metadata": pkg.metadata, "files": files},
                                              params=share, headers={"Idempotency-Key": pkg.idempotency_key}))
        offset, size = int(upload["offset"]), int(upload["size"])
        if offset:
            wait(f"resuming at byte {offset} of {size} (the server holds them already)")
        chunk = max(1, min(chunk_bytes, int(upload.get("chunk_max_bytes") or chunk_bytes)))
        attempt = 0
        while offset < size and not upload.get("committed"):
            data = _read_range(pkg.files, offset, min(chunk, size - offset))
            response, error = None, None
            try:
                response = client.http.patch(f"{base}/{upload['id']}", params={"offset": offset, **share},
                                             content=data,
                                             headers={"Content-Type": "application/octet-stream"})
            except httpx.TransportError as exc:  # refused, reset, timeouts
                error = exc
            if response is not None and response.status_code == 200:
                offset, attempt = int(response.json()["offset"]), 0
                continue
            if response is not None and response.status_code == 409 and "offset" in _body(response):
                offset = int(_body(response)["offset"])  # the server holds fewer bytes: resume there
                continue
            if response is not None and response.status_code not in RETRY_STATUSES:
                client._check(response)  # raises ApiError
            left = remaining()
            why = f"{type(error).__name__}: {error}" if error is not None else _why(response)  # type: ignore[arg-type]
            if left <= 0:
                raise NotDelivered(pkg.directory, f"chunk at byte {offset} of {size}: {why}")
            delay = backoff_delay(attempt, None, left)
            wait(f"PATCH {base}/{upload['id']}?offset={offset}: {why}; retrying in {delay:.1f} s "
                 f"(attempt {attempt + 1}, giving up in {left:.0f} s)")
            time.sleep(delay)
            attempt += 1
            remaining()
            # Where to go on from is the server's to say: the cut chunk may have arrived in part, or whole.
            offset = int(client._check(client.request("GET", f"{base}/{upload['id']}", params=share))["offset"])
            wait(f"resuming at byte {offset} of {size} (the server's offset)")
        remaining()
        result: dict[str, Any] = client._check(client.request("POST", f"{base}/{upload['id']}/commit", params=share))
        return result
    except NotDelivered:
        raise
    except ApiError as exc:
        raise NotDelivered(pkg.directory, str(exc)) from exc
    except Exception as exc:  # transport errors after the retry deadline
        raise NotDelivered(pkg.directory, f"{type(exc).__name__}: {exc}") from exc
    finally:
        client.http.close()


def _body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _read_range(files: list[Path], offset: int, n: int) -> bytes:
    """`n` bytes of the package (the files one after the other) from `offset`."""
    out = bytearray()
    start = 0
    for path in files:
        size = path.stat().st_size
        if offset < start + size and len(out) < n:
            with path.open("rb") as f:
                f.seek(max(0, offset + len(out) - start))
                out += f.read(n - len(out))
        start += size
    return bytes(out)


def main(argv: list[str] | None = None) -> int:
    from .config import get_settings

    parser = argparse.ArgumentParser(
        prog="python -m benchtrail_runner.delivery",
        description="Re-send the results a runner kept because the API never acknowledged them.")
    parser.add_argument("directory", type=Path, help=f"the kept package (the folder holding {MANIFEST})")
    parser.add_argument("--retry-s", type=float, default=None,
                        help="keep retrying this long (default: BENCHTRAIL_RUNNER_UPLOAD_RETRY_S)")
    args = parser.parse_args(argv)
    settings = get_settings()
    try:
        pkg = Package.load(args.directory)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {args.directory}: cannot read the package: {exc}", file=sys.stderr)
        return 2
    retry_s = settings.upload_retry_s if args.retry_s is None else args.retry_s
    try:
        ack = send(pkg, settings.api_url, settings.token, retry_s,
                   on_wait=lambda m: print(m, file=sys.stderr), chunk_bytes=settings.upload_chunk_bytes)
    except NotDelivered as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"run {ack['run']}: results {'were already accepted' if ack.get('duplicate') else 'accepted'} "
          f"({ack['status']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

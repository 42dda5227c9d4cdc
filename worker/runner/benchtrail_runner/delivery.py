"""Getting a finished load test's raw outputs to the API without losing them.

`package` compresses every output with zstd into `<workdir>/upload/` and writes `upload.json` next to
them (the run, the results metadata, the files with their sha256, and one Idempotency-Key for these
results). `send` posts them to `/api/v1/runs/<slug>/results`, retrying connection failures, timeouts and
429/502/503/504 answers with exponential back-off for `BENCHTRAIL_RUNNER_UPLOAD_RETRY_S`, always with the
same Idempotency-Key: the API stores results in one transaction (all files or none) and answers a key
it has already accepted with `duplicate`, so a retry whose first answer was lost never stores twice.

Until the API acknowledges the upload the package stays on disk; if the runner gives up, an operator
re-sends it from the runner host with

    python -m benchtrail_runner.delivery <workdir>/upload

(same environment as the runner: BENCHTRAIL_API_URL and BENCHTRAIL_RUNNER_TOKEN).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from .client import ApiError, Client

MANIFEST = "upload.json"
ZSTD_LEVEL = 3          # ~10x on JTL/CSV/NDJSON at hundreds of MB/s: packaging stays short
_CHUNK = 1 << 20


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
    last (through a rename), so a directory with a manifest always holds a complete package."""
    directory.mkdir(parents=True, exist_ok=True)
    compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    files, entries, raw = [], [], 0
    for i, src in enumerate(outputs):
        # A position prefix keeps names unique (every variant's output may have the same name).
        dst = directory / f"{i:03d}-{src.name}.zst"
        with src.open("rb") as fin, dst.open("wb") as fout:
            compressor.copy_stream(fin, fout, size=src.stat().st_size)
        raw += src.stat().st_size
        files.append(dst)
        entries.append({"name": dst.name, "sha256": _sha256(dst), "size": dst.stat().st_size,
                        "raw_size": src.stat().st_size})
    key = f"runner-{slug}-{uuid.uuid4()}"
    manifest = {"run": slug, "idempotency_key": key, "metadata": metadata, "files": entries, "raw_bytes": raw,
                "share": share}
    tmp = directory / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=1))
    tmp.replace(directory / MANIFEST)
    return Package(directory, slug, key, metadata, files, raw, sum(e["size"] for e in entries), share)


def send(pkg: Package, api_url: str, token: str | None, retry_s: float,
         on_wait: Callable[[str], None] | None = None, timeout: float = 600.0) -> dict[str, Any]:
    """Post the package until the API acknowledges it (202, or 200 `duplicate`); NotDelivered when
    the retries ran out or the API refused the results (e.g. the run is no longer running)."""
    client = Client(api_url, token, timeout=timeout, retry_timeout=retry_s, on_wait=on_wait)
    try:
        result: dict[str, Any] = client.post_files(
            f"/api/v1/runs/{pkg.slug}/results" + (f"?share={pkg.share}" if pkg.share is not None else ""),
            json.dumps(pkg.metadata), pkg.files,
            headers={"Idempotency-Key": pkg.idempotency_key})
        return result
    except ApiError as exc:
        raise NotDelivered(pkg.directory, str(exc)) from exc
    except Exception as exc:  # transport errors after the retry deadline
        raise NotDelivered(pkg.directory, f"{type(exc).__name__}: {exc}") from exc
    finally:
        client.http.close()


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
                   on_wait=lambda m: print(m, file=sys.stderr))
    except NotDelivered as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"run {ack['run']}: results {'were already accepted' if ack.get('duplicate') else 'accepted'} "
          f"({ack['status']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

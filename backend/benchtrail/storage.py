"""Raw files: uploads and runner outputs, content-addressed by sha256 and kept forever so any cell can be
recomputed from what was uploaded; plus the chunks of resumable results uploads while they arrive.

One interface, two backends chosen by `BENCHTRAIL_STORAGE`:
- `local` (the default): files under BENCHTRAIL_DATA_DIR (`blobs/<xx>/<sha256>`, `uploads/<session>/`);
  every API process and worker must see that folder;
- `s3`: an S3-compatible object store (boto3) — bucket `BENCHTRAIL_S3_BUCKET`, optional
  `BENCHTRAIL_S3_ENDPOINT_URL` / `BENCHTRAIL_S3_REGION` / `BENCHTRAIL_S3_PREFIX`, credentials from the
  environment (boto3's chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile, an instance role);
  the API and the workers then need no shared filesystem.

Writes are whole or absent: a local file is written beside its target and renamed; an S3 object exists
only once its upload completed (a failed multipart upload is aborted by boto3's transfer manager).
Writes are durable before they return: a local file's bytes and then its directory entry are fsynced, so
a run row PostgreSQL committed never points at a file an OS crash or power loss took back.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from benchtrail.config import get_settings

CHUNK = 1 << 20
SHA256 = re.compile(r"^[0-9a-f]{64}$")
PART = re.compile(r"^[0-9]{20}(-[0-9a-f]{16})?$")   # a part of a resumable upload: offset[-suffix]
STALE_SCRATCH_S = 24 * 3600  # no upload, chunk or ingest keeps its scratch files this long


class StorageError(Exception):
    """The store could not be read or written (unreachable, refused, missing object)."""


class BlobStore(Protocol):
    name: str

    def put(self, path: Path, sha256: str) -> bool:
        """Store a fully written file under its sha256 unless it is there; True if it was created."""

    def exists(self, sha256: str) -> bool: ...

    def delete(self, sha256: str) -> None: ...

    def local_path(self, sha256: str, scratch: Path) -> Path:
        """A readable local file with the blob's bytes: the blob itself (local) or a copy in `scratch`."""

    def size(self, sha256: str) -> int: ...

    def iter_bytes(self, sha256: str) -> Iterator[bytes]: ...

    # Chunks of a resumable upload (session id, the part's name: its first byte's offset in the package,
    # zero-padded to 20 digits, then for parts written since revision 0022 "-" and a random suffix).
    def put_part(self, session: str, name: str, path: Path) -> None: ...

    def part_names(self, session: str) -> list[str]: ...

    def read_part(self, session: str, name: str, out: Any) -> None: ...

    def delete_part(self, session: str, name: str) -> None: ...

    def delete_parts(self, session: str) -> None: ...


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def scratch_dir() -> Path:
    """BENCHTRAIL_DATA_DIR/tmp, created: scratch files on the data disk (an upload received there is
    hard-linked into the blob store, not copied)."""
    path = get_settings().data_dir / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def temp_files_on_data_disk() -> None:
    """Point this process's (and its children's) temporary files at `scratch_dir()` unless TMPDIR
    chooses: whatever a library or a tool writes to a temporary file (the worker recodes legacy-encoded JTLs
    there) may be a 2 GB file and must land on the data disk, not in a RAM-backed /tmp (Debian 13 mounts /tmp
    as tmpfs). Uploads are written under `scratch_dir()` explicitly (uploads/form.py). Called as an API or a
    worker starts, which also removes what a killed process left there (`remove_stale_scratch`)."""
    from benchtrail.logging import log

    if not os.environ.get("TMPDIR"):
        os.environ["TMPDIR"] = str(scratch_dir())
        tempfile.tempdir = None   # tempfile reads TMPDIR again on its next use
    log.info("temporary files", folder=tempfile.gettempdir(), stale_removed=remove_stale_scratch())


def remove_stale_scratch(max_age_s: float = STALE_SCRATCH_S) -> list[str]:
    """Remove the entries of `scratch_dir()` in which nothing changed for `max_age_s`: what a process killed
    in the middle of an upload or an ingest left (a process removes its own scratch files when it is done).
    Returns their names."""
    cutoff = time.time() - max_age_s
    removed = []
    for entry in os.scandir(scratch_dir()):
        try:
            if _newest_change(Path(entry.path)) >= cutoff:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except FileNotFoundError:   # its process removed it meanwhile
            continue
        removed.append(entry.name)
    return removed


def _newest_change(path: Path) -> float:
    newest = path.lstat().st_mtime
    if path.is_dir() and not path.is_symlink():
        for folder, dirs, files in os.walk(path):
            for name in dirs + files:
                try:
                    newest = max(newest, os.lstat(os.path.join(folder, name)).st_mtime)
                except FileNotFoundError:
                    continue
    return newest


def _make_dirs(folder: Path) -> list[Path]:
    """`folder` and any missing parents, created; returns the ones created (their entries need syncing)."""
    created: list[Path] = []
    for path in (folder, *folder.parents):
        if path.is_dir():
            break
        created.append(path)
    folder.mkdir(parents=True, exist_ok=True)
    return created


def _install(tmp: Path, target: Path, created: list[Path]) -> None:
    """Rename a fully written `tmp` to `target`, durably: the file's bytes reach the disk before the
    rename, the rename (and any folder just created for it) before this returns."""
    _fsync(tmp)
    os.replace(tmp, target)
    _sync_entries(target, created)


def _sync_entries(target: Path, created: list[Path]) -> None:
    """`target`'s name in its folder, and each folder just created for it in its parent, on the disk."""
    for folder in (target.parent, *(p.parent for p in created)):
        _fsync(folder)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _part_name(name: str) -> str:
    if not PART.match(name):
        raise ValueError(f"not a part name: {name!r}")
    return name


def _check(sha256: str) -> str:
    if not SHA256.match(sha256):
        raise ValueError(f"not a sha256: {sha256!r}")
    return sha256


class LocalStore:
    name = "local"

    def __init__(self, root: Path) -> None:
        self.root = root

    def _blob(self, sha256: str) -> Path:
        return self.root / "blobs" / _check(sha256)[:2] / sha256

    def _parts(self, session: str) -> Path:
        return self.root / "uploads" / session

    def put(self, path: Path, sha256: str) -> bool:
        target = self._blob(sha256)
        if target.exists():
            return False
        created = _make_dirs(target.parent)
        # A name of this call's own: two requests of one process may store the same content at once (uploads
        # run in a thread pool); with one name per process, one removed the other's file (a 500, seen in make test).
        tmp = target.with_name(f"{sha256}.{os.getpid()}.{threading.get_ident()}.part")
        tmp.unlink(missing_ok=True)
        try:   # a hard link when the (never rewritten) temp file is on the same file system: a 1 GB JTL is not copied
            os.link(path, tmp)
        except OSError:
            shutil.copyfile(path, tmp)
        _fsync(tmp)
        try:   # only if absent: of two calls storing one content at once, one creates it and says so
            os.link(tmp, target)
        except FileExistsError:
            return False
        finally:
            tmp.unlink()
        _sync_entries(target, created)
        return True

    def exists(self, sha256: str) -> bool:
        return self._blob(sha256).exists()

    def delete(self, sha256: str) -> None:
        self._blob(sha256).unlink(missing_ok=True)

    def local_path(self, sha256: str, scratch: Path) -> Path:
        path = self._blob(sha256)
        if not path.exists():
            raise StorageError(f"raw file {sha256} is missing from {path.parent}")
        return path

    def size(self, sha256: str) -> int:
        return self._blob(sha256).stat().st_size

    def iter_bytes(self, sha256: str) -> Iterator[bytes]:
        try:
            f = self._blob(sha256).open("rb")
        except OSError as exc:
            raise StorageError(f"raw file {sha256}: {exc}") from exc

        def chunks() -> Iterator[bytes]:
            with f:
                while chunk := f.read(CHUNK):
                    yield chunk

        return chunks()

    def put_part(self, session: str, name: str, path: Path) -> None:
        folder = self._parts(session)
        created = _make_dirs(folder)
        tmp = folder / f".{_part_name(name)}.{os.getpid()}.part"
        shutil.copyfile(path, tmp)
        _install(tmp, folder / name, created)

    def part_names(self, session: str) -> list[str]:
        folder = self._parts(session)
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if PART.match(p.name))

    def read_part(self, session: str, name: str, out: Any) -> None:
        with (self._parts(session) / _part_name(name)).open("rb") as f:
            shutil.copyfileobj(f, out, CHUNK)

    def delete_part(self, session: str, name: str) -> None:
        (self._parts(session) / _part_name(name)).unlink(missing_ok=True)

    def delete_parts(self, session: str) -> None:
        shutil.rmtree(self._parts(session), ignore_errors=True)


class S3Store:
    name = "s3"

    def __init__(self, bucket: str, prefix: str = "", endpoint_url: str | None = None,
                 region: str | None = None) -> None:
        import boto3
        from botocore.config import Config

        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.client = boto3.client("s3", endpoint_url=endpoint_url or None, region_name=region or None,
                                   config=Config(retries={"mode": "standard", "max_attempts": 5}))

    def _blob(self, sha256: str) -> str:
        return f"{self.prefix}blobs/{_check(sha256)[:2]}/{sha256}"

    def _part(self, session: str, name: str) -> str:
        return f"{self.prefix}uploads/{session}/{_part_name(name)}"

    def _missing(self, exc: Exception) -> bool:
        from botocore.exceptions import ClientError

        return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in (
            "404", "NoSuchKey", "NotFound")

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn(*args, **kwargs)
        except (BotoCoreError, ClientError) as exc:
            raise StorageError(f"object store s3://{self.bucket}/{self.prefix}: {what}: {exc}") from exc

    def exists(self, sha256: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self._blob(sha256))
            return True
        except (BotoCoreError, ClientError) as exc:
            if self._missing(exc):
                return False
            raise StorageError(f"object store s3://{self.bucket}/{self.prefix}: head {sha256}: {exc}") from exc

    def put(self, path: Path, sha256: str) -> bool:
        if self.exists(sha256):
            return False
        self._call(f"put {sha256}", self.client.upload_file, str(path), self.bucket, self._blob(sha256))
        return True

    def delete(self, sha256: str) -> None:
        self._call(f"delete {sha256}", self.client.delete_object, Bucket=self.bucket, Key=self._blob(sha256))

    def local_path(self, sha256: str, scratch: Path) -> Path:
        target = scratch / f"blob-{sha256}"
        if not target.exists():
            self._call(f"get {sha256}", self.client.download_file, self.bucket, self._blob(sha256), str(target))
        return target

    def size(self, sha256: str) -> int:
        head = self._call(f"head {sha256}", self.client.head_object, Bucket=self.bucket, Key=self._blob(sha256))
        return int(head["ContentLength"])

    def iter_bytes(self, sha256: str) -> Iterator[bytes]:
        # Opened now, so a missing object or an unreachable store is an error before any byte is sent.
        body = self._call(f"get {sha256}", self.client.get_object, Bucket=self.bucket,
                          Key=self._blob(sha256))["Body"]

        def chunks() -> Iterator[bytes]:
            try:
                yield from body.iter_chunks(CHUNK)
            finally:
                body.close()

        return chunks()

    def put_part(self, session: str, name: str, path: Path) -> None:
        self._call(f"put chunk {session}/{name}", self.client.upload_file, str(path), self.bucket,
                   self._part(session, name))

    def _part_keys(self, session: str) -> list[str]:
        keys: list[str] = []
        paginator = self.client.get_paginator("list_objects_v2")
        pages = self._call(f"list chunks {session}", lambda: list(paginator.paginate(
            Bucket=self.bucket, Prefix=f"{self.prefix}uploads/{session}/")))
        for page in pages:
            keys += [obj["Key"] for obj in page.get("Contents", [])]
        return keys

    def part_names(self, session: str) -> list[str]:
        return sorted(name for key in self._part_keys(session) if PART.match(name := key.rsplit("/", 1)[1]))

    def read_part(self, session: str, name: str, out: Any) -> None:
        # Streamed in order: download_fileobj writes at the object's own offsets (seeking `out` to them),
        # which would overwrite the chunks before this one.
        body = self._call(f"get chunk {session}/{name}", self.client.get_object, Bucket=self.bucket,
                          Key=self._part(session, name))["Body"]
        try:
            for data in body.iter_chunks(CHUNK):
                out.write(data)
        except Exception as exc:
            raise StorageError(f"object store s3://{self.bucket}/{self.prefix}: read chunk {session}/{name}: "
                               f"{exc}") from exc
        finally:
            body.close()

    def delete_part(self, session: str, name: str) -> None:
        self._call(f"delete chunk {session}/{name}", self.client.delete_object, Bucket=self.bucket,
                   Key=self._part(session, name))

    def delete_parts(self, session: str) -> None:
        for key in self._part_keys(session):
            self._call(f"delete chunk {key}", self.client.delete_object, Bucket=self.bucket, Key=key)


@lru_cache
def get_store() -> BlobStore:
    settings = get_settings()
    if settings.storage == "s3":
        return S3Store(settings.s3_bucket, settings.s3_prefix, settings.s3_endpoint_url, settings.s3_region)
    return LocalStore(settings.data_dir)

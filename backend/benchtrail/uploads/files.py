"""Receiving uploaded files: streamed to disk, hashed, decompressed with bomb guards."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

from benchtrail import storage
from benchtrail.config import get_settings
from benchtrail.errors import InvalidResultFile, PayloadTooLarge, outage_kind

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass(slots=True)
class ReceivedFile:
    filename: str
    raw_path: Path          # exactly the bytes received (what is stored as the blob)
    raw_sha256: str
    raw_size: int
    data_path: Path         # what parsers read (decompressed when the upload was compressed)


class RawSink:
    """One uploaded file written to disk as its bytes arrive, hashed and counted against the upload
    limit on the way; `finish` checks it and decompresses it if it is compressed. The file is written
    once, on the data disk, from where the blob store links it in."""

    def __init__(self, filename: str, workdir: Path) -> None:
        self.filename = filename
        self.limit = get_settings().max_upload_mb * 1024 * 1024
        self.own = Path(tempfile.mkdtemp(dir=workdir, prefix="f-"))
        (self.own / "raw").mkdir()
        # Parsers see the uploader's file name (it appears in messages and helps detection).
        self.raw = self.own / "raw" / safe_name(filename)
        self.out = self.raw.open("wb")
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes | memoryview) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise PayloadTooLarge(f"file '{self.filename}' exceeds the upload limit of "
                                  f"{get_settings().max_upload_mb} MB (BENCHTRAIL_MAX_UPLOAD_MB)")
        self.sha256.update(chunk)
        self.out.write(chunk)

    def close(self) -> None:
        self.out.close()

    def finish(self) -> ReceivedFile:
        self.out.close()
        if self.size == 0:
            raise InvalidResultFile(self.filename, "the file is empty")
        with self.raw.open("rb") as f:
            magic = f.read(4)
        data = self.raw
        if magic.startswith(GZIP_MAGIC) or magic == ZIP_MAGIC or magic == ZSTD_MAGIC:
            data = _decompress(self.raw, magic, self.filename, self.size, self.own / uncompressed_name(self.filename))
        return ReceivedFile(self.filename, self.raw, self.sha256.hexdigest(), self.size, data)


def new_scratch_folder() -> Path:
    """A folder of its own on the data disk for one upload's files (removed by the caller once what is
    kept has been linked into the blob store)."""
    return Path(tempfile.mkdtemp(prefix="upload-", dir=storage.scratch_dir()))


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """`new_scratch_folder`, removed afterwards."""
    workdir = new_scratch_folder()
    try:
        yield workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def safe_name(filename: str) -> str:
    name = Path(filename.replace("\\", "/")).name.strip() or "upload"
    return "".join(c if c.isprintable() and c not in "/\0" else "_" for c in name)[:200]


def uncompressed_name(filename: str) -> str:
    name = safe_name(filename)
    for ext in (".gz", ".gzip", ".zst", ".zip"):
        if name.lower().endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name + ".data"


def _decompress(raw: Path, magic: bytes, filename: str, packed: int, out_path: Path) -> Path:
    settings = get_settings()
    cap = min(settings.max_uncompressed_mb * 1024 * 1024, packed * settings.max_compression_ratio)
    try:
        with raw.open("rb") as src, out_path.open("wb") as out:
            if magic == ZIP_MAGIC:
                with zipfile.ZipFile(src) as zf:
                    members = [m for m in zf.infolist() if not m.is_dir()]
                    if len(members) != 1:
                        raise InvalidResultFile(filename, f"a zip upload must hold exactly one result "
                                                          f"file, this one holds {len(members)}")
                    with zf.open(members[0]) as inner:
                        _copy_capped(inner, out, cap, filename)
            elif magic == ZSTD_MAGIC:
                with zstandard.ZstdDecompressor().stream_reader(src) as inner:
                    _copy_capped(inner, out, cap, filename)
            else:
                with gzip.GzipFile(fileobj=src) as inner:
                    _copy_capped(inner, out, cap, filename)
    except (OSError, EOFError, zlib.error, zipfile.BadZipFile, zstandard.ZstdError) as exc:   # zlib: a bad deflate stream
        if outage_kind(exc) is not None:
            raise   # our disk refused the copy (full, ...): a 503 / a retried ingest, not the file's fault
        raise InvalidResultFile(filename, f"corrupt compressed file: {exc}") from None
    return out_path


def _copy_capped(src: BinaryIO, out: BinaryIO, cap: int, filename: str) -> None:
    written = 0
    while chunk := src.read(CHUNK):
        written += len(chunk)
        if written > cap:
            raise PayloadTooLarge(
                f"file '{filename}' expands beyond {cap} bytes when decompressed (limit: "
                f"BENCHTRAIL_MAX_UNCOMPRESSED_MB and a {get_settings().max_compression_ratio}:1 ratio); "
                f"refusing a possible decompression bomb")
        out.write(chunk)
    if written == 0:
        raise InvalidResultFile(filename, "the compressed file is empty")


def open_blob_for_parsing(blob: Path, filename: str, workdir: Path) -> Path:
    """Blobs are stored as received; the worker decompresses again into a scratch dir, or links the
    blob under the uploader's file name."""
    own = Path(tempfile.mkdtemp(dir=workdir, prefix="f-"))
    with blob.open("rb") as f:
        magic = f.read(4)
    if magic.startswith(GZIP_MAGIC) or magic == ZIP_MAGIC or magic == ZSTD_MAGIC:
        return _decompress(blob, magic, filename, blob.stat().st_size, own / uncompressed_name(filename))
    link = own / safe_name(filename)
    link.symlink_to(blob.resolve())
    return link

"""Receiving uploaded files: streamed to disk, hashed, decompressed with bomb guards."""

from __future__ import annotations

import gzip
import hashlib
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

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


def receive(stream: BinaryIO, filename: str, workdir: Path) -> ReceivedFile:
    """Copy an upload to disk in chunks, enforcing the size limit; decompress if compressed."""
    settings = get_settings()
    limit = settings.max_upload_mb * 1024 * 1024
    # Parsers see the uploader's file name (it appears in messages and helps detection).
    own = Path(tempfile.mkdtemp(dir=workdir, prefix="f-"))
    (own / "raw").mkdir()
    raw = own / "raw" / safe_name(filename)
    h = hashlib.sha256()
    size = 0
    with raw.open("wb") as out:
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"file '{filename}' exceeds the upload limit of "
                                      f"{settings.max_upload_mb} MB (BENCHTRAIL_MAX_UPLOAD_MB)")
            h.update(chunk)
            out.write(chunk)
    if size == 0:
        raise InvalidResultFile(filename, "the file is empty")
    with raw.open("rb") as f:
        magic = f.read(4)
    data = raw
    if magic.startswith(GZIP_MAGIC) or magic == ZIP_MAGIC or magic == ZSTD_MAGIC:
        data = _decompress(raw, magic, filename, size, own / uncompressed_name(filename))
    return ReceivedFile(filename, raw, h.hexdigest(), size, data)


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
    except (OSError, EOFError, zipfile.BadZipFile, zstandard.ZstdError) as exc:
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

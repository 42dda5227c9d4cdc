"""Compressed result files (gzip, zstd, a zip of one file): decompressed with guards against bombs, when an upload
arrives (uploads/files.py) and again when the worker parses the stored blob, which is kept as it was received."""

from __future__ import annotations

import gzip
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO

import zstandard

from benchtrail.config import get_settings
from benchtrail.errors import InvalidResultFile, PayloadTooLarge, outage_kind

CHUNK = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def safe_name(filename: str) -> str:
    name = Path(filename.replace("\\", "/")).name.strip() or "upload"
    return "".join(c if c.isprintable() and c not in "/\0" else "_" for c in name)[:200]


def uncompressed_name(filename: str) -> str:
    name = safe_name(filename)
    for ext in (".gz", ".gzip", ".zst", ".zip"):
        if name.lower().endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name + ".data"


def decompress(raw: Path, magic: bytes, filename: str, packed: int, out_path: Path) -> Path:
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
        return decompress(blob, magic, filename, blob.stat().st_size, own / uncompressed_name(filename))
    link = own / safe_name(filename)
    link.symlink_to(blob.resolve())
    return link

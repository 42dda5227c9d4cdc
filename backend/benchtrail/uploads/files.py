"""Receiving uploaded files: streamed to disk, hashed, decompressed with bomb guards (`ingest.packed`)."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


from benchtrail import storage
from benchtrail.config import get_settings
from benchtrail.errors import InvalidResultFile, PayloadTooLarge
from benchtrail.ingest.packed import GZIP_MAGIC, ZIP_MAGIC, ZSTD_MAGIC, decompress, safe_name, uncompressed_name


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
            data = decompress(self.raw, magic, self.filename, self.size, self.own / uncompressed_name(self.filename))
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



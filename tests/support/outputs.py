"""A runner's raw outputs as stored: zstd-compressed (`<n>-<name>.zst`), read back as plain bytes."""

from __future__ import annotations

import io

import zstandard

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def plain(body: bytes) -> bytes:
    """The file's bytes, decompressed when they are a zstd frame (a runner's upload), as they are otherwise."""
    if body.startswith(ZSTD_MAGIC):
        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body)).read()
    return body

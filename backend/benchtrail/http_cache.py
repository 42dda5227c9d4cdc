"""Conditional GETs: every cacheable read carries a strong ETag of its body, and a client that sends it
back in If-None-Match gets 304 without the body. Reads are revalidated every time (`no-cache`): a
completed run's measurements never change, but its alerts can be triaged, so freshness is the
server's call. Private projects' answers are never stored by shared caches."""

from __future__ import annotations

import hashlib

from fastapi import Request, Response
from pydantic import BaseModel

JSON = "application/json"


def cached_json(request: Request, model: BaseModel, *, public: bool) -> Response:
    return cached_bytes(request, model.model_dump_json().encode(), JSON, public=public)


def cached_bytes(request: Request, body: bytes, media_type: str, *, public: bool, max_age: int = 0) -> Response:
    """`max_age` > 0 lets caches keep a public answer that long without asking (images in READMEs)."""
    etag = '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'
    freshness = f"max-age={max_age}" if max_age and public else "no-cache"
    headers = {"ETag": etag, "Cache-Control": f"{'public' if public else 'private'}, {freshness}",
               "Vary": "Authorization"}
    if etag in _tags(request.headers.get("if-none-match")):
        return Response(status_code=304, headers=headers)
    return Response(content=body, media_type=media_type, headers=headers)


def _tags(header: str | None) -> set[str]:
    if not header:
        return set()
    return {t.strip().removeprefix("W/") for t in header.split(",")}

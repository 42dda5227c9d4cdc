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
    body = model.model_dump_json().encode()
    etag = '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'
    headers = {"ETag": etag, "Cache-Control": ("public" if public else "private") + ", no-cache",
               "Vary": "Authorization"}
    if etag in _tags(request.headers.get("if-none-match")):
        return Response(status_code=304, headers=headers)
    return Response(content=body, media_type=JSON, headers=headers)


def _tags(header: str | None) -> set[str]:
    if not header:
        return set()
    return {t.strip().removeprefix("W/") for t in header.split(",")}

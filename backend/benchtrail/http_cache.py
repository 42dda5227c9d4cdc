"""Conditional GETs: every cacheable read carries a strong ETag of its body, and a client that sends it
back in If-None-Match gets 304 without the body. Reads are revalidated every time (`no-cache`): a
completed run's measurements never change, but its alerts can be triaged, so freshness is the
server's call. Private projects' answers are never stored by shared caches.

Each API process also keeps the answers of the hot reads (`remembered_json`), keyed by the URL and the
revision of the project they belong to (benchtrail/revisions.py), read in the read's first statement
together with what authorises it. Any committed write to the project changes the revision, so a kept
answer is never served after the data under it changed; a hit costs that one statement.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import NamedTuple, Protocol

import psycopg
from cachetools import LRUCache
from fastapi import Request, Response
from prometheus_client import Counter
from pydantic import BaseModel
from sqlalchemy.orm import Session

from benchtrail import db, revisions
from benchtrail.auth.principal import Principal, in_request, resolve_on_loop
from benchtrail.config import get_settings

JSON = "application/json"
ANSWERED_ON_LOOP = Counter("benchtrail_answers_on_loop_total",
                           "Hot reads answered from the kept answers on the event loop, without a worker thread")
NOT_MODIFIED = {304: {"description": "Not modified: the ETag sent in If-None-Match is current"}}


def cached_json(request: Request, model: BaseModel, *, public: bool) -> Response:
    return cached_bytes(request, model.model_dump_json().encode(), JSON, public=public)


def cached_bytes(request: Request, body: bytes, media_type: str, *, public: bool, max_age: int = 0) -> Response:
    """`max_age` > 0 lets caches keep a public answer that long without asking (images in READMEs)."""
    return _respond(request, _Answer(body, _etag(body), public), media_type, max_age)


class _Answer(NamedTuple):
    body: bytes
    etag: str
    public: bool


def _etag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def _respond(request: Request, answer: _Answer, media_type: str, max_age: int = 0) -> Response:
    freshness = f"max-age={max_age}" if max_age and answer.public else "no-cache"
    headers = {"ETag": answer.etag, "Cache-Control": f"{'public' if answer.public else 'private'}, {freshness}",
               "Vary": "Authorization"}
    if answer.etag in _tags(request.headers.get("if-none-match")):
        return Response(status_code=304, headers=headers)
    return Response(content=answer.body, media_type=media_type, headers=headers)


def _tags(header: str | None) -> set[str]:
    if not header:
        return set()
    return {t.strip().removeprefix("W/") for t in header.split(",")}


class Head(Protocol):
    """What a remembered read learns in its first statement: the project (for visibility) and its
    revision."""

    @property
    def id(self) -> int: ...

    @property
    def is_public(self) -> bool: ...

    @property
    def revision(self) -> int: ...


class _Flight:
    """One answer being built; the readers of the same key wait for it instead of building it too."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: _Answer | None = None


class _Answers:
    """The kept answers of one process, least recently used dropped first, bounded in bytes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: LRUCache[tuple[str, str, int, int], _Answer] | None = None
        self._flights: dict[tuple[str, str, int, int], _Flight] = {}

    def _cache(self) -> LRUCache[tuple[str, str, int, int], _Answer]:
        if self._items is None:
            self._items = LRUCache(maxsize=get_settings().answer_cache_mb * 1024 * 1024,
                                   getsizeof=lambda a: len(a.body) + 200)
        return self._items

    def keeps(self) -> bool:
        """Whether answers are kept at all (BENCHTRAIL_ANSWER_CACHE_MB > 0)."""
        return self._cache().maxsize > 0

    def get(self, key: tuple[str, str, int, int]) -> _Answer | None:
        with self._lock:
            found: _Answer | None = self._cache().get(key)
        return found

    def put(self, key: tuple[str, str, int, int], answer: _Answer) -> None:
        with self._lock:
            cache = self._cache()
            if len(answer.body) + 200 <= cache.maxsize:
                cache[key] = answer

    def get_or_build(self, key: tuple[str, str, int, int], build: Callable[[], _Answer]) -> _Answer:
        """The kept answer, else `build()` kept, built once however many readers ask for it at the same
        time: after a write to a project every open page asks again at once, and each would build the
        same answer (measured, 16 concurrent first reads in one process, a project of 120 runs: a trail's
        slowest 60-74 ms when each built, 20-27 ms when one did; the runs list 33-46 ms, 16-21 ms). A reader
        whose builder failed builds for itself (and meets the error).
        With nothing kept (BENCHTRAIL_ANSWER_CACHE_MB=0) every reader builds its own."""
        found = self.get(key)
        if found is not None:
            return found
        if not self.keeps():
            return build()
        with self._lock:
            flight = self._flights.get(key)
            building = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
        if not building:
            flight.done.wait()
            return flight.answer if flight.answer is not None else build()
        try:
            flight.answer = build()
            self.put(key, flight.answer)
            return flight.answer
        finally:
            with self._lock:
                del self._flights[key]
            flight.done.set()


ANSWERS = _Answers()


def _key(request: Request, head: Head) -> tuple[str, str, int, int]:
    """What a kept answer is found by: the URL and the revision of the project it belongs to."""
    return request.url.path, request.url.query, head.id, head.revision


def remembered_json(request: Request, head: Head | None, can_see: Callable[[Head], bool],
                    build: Callable[[], BaseModel]) -> Response:
    """The answer kept for this URL at the project's current revision, else `build()` (the read, raising
    its own errors) answered and kept. `head` must be read before anything `build` reads, so the kept
    answer is at least as new as its revision; it is None when the thing read does not exist. Only
    answers the principal may see through the project (`can_see`) are served from or kept in memory
    (not a runner reading the run it executes)."""
    key = _key(request, head) if head is not None and can_see(head) else None

    def answer_of_build() -> _Answer:
        body = build().model_dump_json().encode()
        return _Answer(body, _etag(body), head is not None and head.is_public)

    answer = ANSWERS.get_or_build(key, answer_of_build) if key is not None else answer_of_build()
    return _respond(request, answer, JSON)


async def remembered_read(request: Request, token: str | None, head: revisions.HeadQuery,
                          build: Callable[[Session, Principal], BaseModel]) -> Response:
    """A hot read: the kept answer found on the event loop (`kept_on_loop`), else its session and principal in a
    worker thread (`auth.principal.in_request`), `head` read first, then the kept answer or `build`
    (`remembered_json`)."""
    answer = await kept_on_loop(request, token, head)
    if answer is not None:
        return _respond(request, answer, JSON)
    return await in_request(token, lambda session, principal: remembered_json(
        request, revisions.read_head(session, head), principal.can_see, lambda: build(session, principal)))


async def kept_on_loop(request: Request, token: str | None, head: revisions.HeadQuery) -> _Answer | None:
    """The answer kept for this read at the project's current revision, found without leaving the event loop:
    the token and the head read by prepared statements on the process's loop pool (`db.loop_connection`),
    with no thread hop and no ORM session. On a 2-core machine, a one-project read went from ~2,200 to
    ~3,000 req/s (32 connections).

    None when the worker thread must answer: nothing kept for it, a principal that cannot see the project, a
    token `resolve` must judge or write, or no connection at hand within `db.LOOP_WAIT_S` (a database down or
    restarted: the thread path then answers 503 or reads again on a new connection, as before)."""
    if not ANSWERS.keeps():
        return None
    try:
        async with db.loop_connection() as conn:
            principal = await resolve_on_loop(conn, token)
            if principal is None:
                return None
            found = await revisions.read_head_on_loop(conn, head)
    except psycopg.Error:   # an outage, a PoolTimeout, a restarted database: the thread path judges it
        return None
    if found is None or not principal.can_see(found):
        return None
    answer = ANSWERS.get(_key(request, found))
    if answer is not None:
        ANSWERED_ON_LOOP.inc()
    return answer

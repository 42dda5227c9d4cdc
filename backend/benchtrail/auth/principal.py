"""Who is calling, and what they may do on a project."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import cache
from typing import Any, Protocol, TypeVar

from psycopg import AsyncConnection
from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from benchtrail import db
from benchtrail.auth.tokens import ROLE_RANK, hash_token
from benchtrail.db_boundary import read_unit
from benchtrail.errors import ErrorCode, Forbidden, NotFound, Unauthorized
from benchtrail.models import ApiToken, Project


class ProjectRef(Protocol):
    """What visibility needs of a project: a `Project`, or a plain row of its columns."""

    @property
    def id(self) -> int: ...

    @property
    def is_public(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Principal:
    token_id: int | None = None
    project_id: int | None = None  # None with a token = site-wide token
    role: str | None = None
    name: str = "anonymous"
    pools: tuple[str, ...] | None = None  # runner tokens: the pools it may claim from; None = all

    @property
    def is_anonymous(self) -> bool:
        return self.token_id is None

    @property
    def is_site_admin(self) -> bool:
        return self.token_id is not None and self.project_id is None and self.role == "admin"

    @property
    def is_runner(self) -> bool:
        return self.token_id is not None and self.project_id is None and self.role == "runner"

    def rank_on(self, project: ProjectRef) -> int:
        if self.token_id is None or self.is_runner:
            # A runner token holds no role on any project: it only claims and reports plan runs
            # (benchtrail.plans.execution), and reads the runs it executes.
            return 0
        if self.project_id is None:  # site-wide tokens act on every project
            return ROLE_RANK[self.role or "viewer"]
        return ROLE_RANK[self.role or "viewer"] if self.project_id == project.id else 0

    def can_see(self, project: ProjectRef) -> bool:
        return project.is_public or self.rank_on(project) > 0

    def require(self, project: Project, role: str) -> None:
        """Raise the right error when this principal may not act with `role` on `project`:
        a private project it cannot see is a 404 (its existence is not revealed)."""
        if not self.can_see(project):
            raise NotFound(f"project '{project.slug}' not found")
        if self.rank_on(project) >= ROLE_RANK[role]:
            return
        if self.is_anonymous:
            raise Unauthorized(f"this action needs a token with the '{role}' role on '{project.slug}'", code=ErrorCode.TOKEN_MISSING)
        if self.is_runner:
            raise Forbidden(f"runner token '{self.name}' may only claim and report plan runs; it has no "
                            f"'{role}' role on project '{project.slug}'", code=ErrorCode.RUNNER_TOKEN_ONLY_RUNS)
        raise Forbidden(f"token '{self.name}' lacks the '{role}' role on project '{project.slug}'", code=ErrorCode.ROLE_REQUIRED)

    def may_claim(self, pool: str) -> bool:
        return self.is_runner and (self.pools is None or pool in self.pools)

    def require_site_admin(self) -> None:
        if self.is_anonymous:
            raise Unauthorized("this action needs a site admin token", code=ErrorCode.TOKEN_MISSING)
        if not self.is_site_admin:
            raise Forbidden("this action needs a site admin token", code=ErrorCode.SITE_ADMIN_REQUIRED)


# How stale a token's last-used time may be. Writing it on every request made every read a write, and
# concurrent requests with one token (a dashboard, a CI job) queued on that row's lock.
LAST_USED_RESOLUTION = timedelta(minutes=1)


_TOKEN = select(ApiToken.id, ApiToken.project_id, ApiToken.role, ApiToken.name, ApiToken.pools,
                ApiToken.revoked_at, ApiToken.last_used_at).where(ApiToken.token_hash == bindparam("token_hash"))


def resolve(session: Session, token: str | None) -> Principal:
    if token is None:
        return Principal()
    row = session.execute(_TOKEN, {"token_hash": hash_token(token)}).one_or_none()
    if row is None or row.revoked_at is not None:
        raise Unauthorized("invalid or revoked token", code=ErrorCode.TOKEN_INVALID)
    now = datetime.now(timezone.utc)
    stale = now - LAST_USED_RESOLUTION
    if row.last_used_at is None or row.last_used_at < stale:
        # The condition again in SQL: of several requests that saw a stale time at once, one writes.
        session.execute(update(ApiToken)
                        .where(ApiToken.id == row.id,
                               or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at < stale))
                        .values(last_used_at=now))
    return _principal_of(row)


async def resolve_on_loop(conn: AsyncConnection[Any], token: str | None) -> Principal | None:
    """`resolve` on the event loop (`db.loop_connection`), for a read that needs nothing else written: None
    when `resolve` must decide (an unknown or revoked token, whose error it raises, or a last-used time due
    to be written)."""
    if token is None:
        return Principal()
    row = await db.loop_row(conn, _TOKEN, {"token_hash": hash_token(token)})
    if row is None or row.revoked_at is not None or row.last_used_at is None \
            or row.last_used_at < datetime.now(timezone.utc) - LAST_USED_RESOLUTION:
        return None
    return _principal_of(row)


def _principal_of(row: Any) -> Principal:
    """The principal of a `_TOKEN` row."""
    return Principal(token_id=row.id, project_id=row.project_id, role=row.role, name=row.name,
                     pools=tuple(row.pools) if row.pools is not None else None)


T = TypeVar("T")


@cache
def _read_threads() -> ThreadPoolExecutor:
    # Created in each API worker process, on its first read (never inherited across a fork).
    return ThreadPoolExecutor(db.connection_share().read, thread_name_prefix="read")


async def in_request(token: str | None, work: Callable[[Session, Principal], T]) -> T:
    """The whole of a read's database work in one worker thread: its session (`read_unit`), its
    principal (from `token`, see `dependencies.TokenDep`) and `work`. For the hot reads (project, runs list, run
    document, series, overheads, trails): sync dependencies and a sync endpoint cost a thread hop each
    (session, principal, endpoint, response validation), more than the work of a small read.

    The threads are a pool of their own, as many as the read connections (`ConnectionShare.read`), so no
    thread waits for a connection; asyncio's executor hop costs less than anyio's `to_thread` (capacity
    limiter, cancel scope): measured on the project read, 32 connections, +8% req/s."""
    def run() -> T:
        try:
            with read_unit() as session:
                return work(session, resolve(session, token))
        except DBAPIError as exc:
            if not exc.connection_invalidated:
                raise
        # A pooled connection had died (the database restarted): the pool is invalidated, the read
        # is done again on a new connection (reads are idempotent).
        with read_unit() as session:
            return work(session, resolve(session, token))

    # In the request's context, as anyio's to_thread ran it (context variables seen in the thread).
    return await asyncio.get_running_loop().run_in_executor(_read_threads(), contextvars.copy_context().run, run)

"""The caller of a request, as FastAPI dependencies: its bearer token and its principal. Apart from the principal
itself (`benchtrail.auth.principal`), which the services take and the worker and the CLI import without the web
framework."""

from __future__ import annotations

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal, resolve
from benchtrail.db_boundary import request_session
from benchtrail.errors import ErrorCode, Unauthorized


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise Unauthorized("Authorization header must be 'Bearer <token>'", code=ErrorCode.TOKEN_MALFORMED)
    return value.strip()


def get_principal(request: Request,
                  session: Session = Depends(request_session, scope="function")) -> Principal:
    return resolve(session, bearer_token(request))


async def request_token(request: Request) -> str | None:
    """The bearer token of a request, read on the event loop (an async dependency costs no thread hop)."""
    return bearer_token(request)


TokenDep = Depends(request_token)

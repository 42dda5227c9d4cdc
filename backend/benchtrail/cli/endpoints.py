"""The client, served by the server it talks to: GET /cli/benchtrail.py is the one-file CI client
(`benchtrail.cli.client`) of this server's version, so a CI job always runs the client that matches."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, Request, Response

from benchtrail.cli import client
from benchtrail.http_cache import NOT_MODIFIED, cached_bytes

router = APIRouter(tags=["client"])
MEDIA_TYPE = "text/x-python"


@lru_cache(maxsize=1)
def client_source() -> bytes:
    return Path(client.__file__).read_bytes()


@router.get("/cli/benchtrail.py", response_class=Response,
            responses={200: {"content": {MEDIA_TYPE: {"schema": {"type": "string"}}},
                             "description": "The client: one Python file (Python >= 3.9, standard library only), "
                                            "with an ETag; revalidated on every use (Cache-Control no-cache)",
                             "headers": {"X-Benchtrail-Version": {
                                 "description": "The server's version, which the client's `--version` prints too",
                                 "schema": {"type": "string"}}}}} | NOT_MODIFIED)
def download_client(request: Request) -> Response:
    """The command-line client for CI jobs and people (`upload --wait`, `compare --fail-on-worse`, `show`,
    `run`, ...) as one file of this server's version: `curl -fsSL -o benchtrail.py <server>/cli/benchtrail.py`,
    then `python3 benchtrail.py --help`. No token needed."""
    answer = cached_bytes(request, client_source(), f"{MEDIA_TYPE}; charset=utf-8", public=True)
    answer.headers["X-Benchtrail-Version"] = client.__version__
    if answer.status_code == 200:
        answer.headers["Content-Disposition"] = 'inline; filename="benchtrail.py"'
    return answer

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse
from pydantic import Field, StringConstraints
from sqlalchemy.orm import Session

from benchtrail import storage
from benchtrail.auth.principal import Principal, get_principal
from benchtrail.db_boundary import request_session
from benchtrail.errors import NotFound
from benchtrail.openapi import ID
from benchtrail.runs import repository, service
from benchtrail.runs.schemas import PercentilesOut, RunDetail, RunPage, SeriesList

router = APIRouter(prefix="/api/v1", tags=["runs"])
LABEL = r"^[^:]*:"  # key:value; the key is what precedes the first colon
SessionDep = Depends(request_session, scope="function")


@router.get("/projects/{slug}/runs", response_model=RunPage)
def list_runs(slug: str, environment: str | None = None, agent_version: str | None = None,
              branch: str | None = None, status: str | None = None,
              label: list[Annotated[str, StringConstraints(pattern=LABEL)]] = Query(
                  default=[], description="key:value (the first colon splits), repeatable; every one must match"),
              page: int = Query(default=1, ge=1, le=1_000_000), per_page: int = Query(default=50, ge=1, le=500),
              session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> RunPage:
    return service.list_runs(session, principal, slug, environment=environment, agent_version=agent_version,
                             branch=branch, status=status, labels=label, page=page, per_page=per_page)


@router.get("/runs/{slug}", response_model=RunDetail)
def get_run(slug: str, session: Session = SessionDep, principal: Principal = Depends(get_principal)) -> RunDetail:
    return service.detail(session, principal, slug)


@router.get("/runs/{slug}/series", response_model=SeriesList)
def get_series(slug: str, metric: str | None = None, session: Session = SessionDep,
               principal: Principal = Depends(get_principal)) -> SeriesList:
    return SeriesList(items=service.series(session, principal, slug, metric))


@router.get("/runs/{slug}/percentiles", response_model=PercentilesOut)
def get_percentiles(slug: str, p: list[Annotated[float, Field(ge=0, le=100)]] = Query(
                        default=[], description="Percentiles, 0..100, repeatable; default: a spectrum"), session: Session = SessionDep,
                    principal: Principal = Depends(get_principal)) -> PercentilesOut:
    return PercentilesOut(items=service.percentiles(session, principal, slug, p))


@router.get("/runs/{slug}/files/{file_id}/raw", response_class=FileResponse, responses={200: {
    "description": "The file as uploaded", "content": {"application/octet-stream": {"schema": {"type": "string",
                                                                                         "format": "binary"}}}}})
def download_raw(slug: str, file_id: ID, session: Session = SessionDep,
                 principal: Principal = Depends(get_principal)) -> FileResponse:
    run, _ = service.get_visible_run(session, principal, slug)
    found = repository.run_file(session, run.id, file_id)
    if found is None:
        raise NotFound(f"file {file_id} not found in run '{slug}'")
    run_file, blob = found
    return FileResponse(storage.blob_path(blob.sha256), filename=run_file.filename,
                        media_type="application/octet-stream")

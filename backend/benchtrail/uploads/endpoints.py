from __future__ import annotations

from fastapi import APIRouter, Depends, File, Form, Header, UploadFile
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal, get_principal
from benchtrail.db_boundary import request_session
from benchtrail.openapi import RESULT_FILE_400, ResultFileError, errors
from benchtrail.uploads import service
from benchtrail.uploads.schemas import UploadAccepted

router = APIRouter(prefix="/api/v1", tags=["uploads"])


@router.post("/projects/{slug}/runs", response_model=UploadAccepted, status_code=202,
             responses={200: {"model": UploadAccepted, "description": "Same Idempotency-Key: the existing run"},
                        **errors(400, model=ResultFileError, e400=RESULT_FILE_400), **errors(403),
                        **errors(413, e413="Upload too large (checked before it is read) or a decompression bomb")})
def upload_run(slug: str,
               metadata: str = Form(description="UploadMetadata as JSON; files[i] describes the i-th file"),
               files: list[UploadFile] = File(description="Raw result files (may be gzip/zstd/zip)"),
               idempotency_key: str | None = Header(default=None, max_length=200),
               session: Session = Depends(request_session, scope="function"),
               principal: Principal = Depends(get_principal)) -> JSONResponse:
    result = service.accept_upload(session, principal, slug, metadata,
                                   [(f.filename or f"file-{i}", f.file) for i, f in enumerate(files)],
                                   idempotency_key)
    return JSONResponse(result.model_dump(mode="json"), status_code=200 if result.duplicate else 202)

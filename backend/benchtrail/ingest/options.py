"""From an uploader's per-file description to the parser's options."""

from __future__ import annotations

from typing import Any

from benchtrail.ingest.model import LoadSpec, ParseOptions


def load_from(data: Any) -> LoadSpec | None:
    if data is None:
        return None
    if isinstance(data, dict):
        return LoadSpec(kind=data["kind"], value=data.get("value"), requests=data.get("requests"),
                        duration_s=data.get("duration_s"))
    return LoadSpec(kind=data.kind, value=data.value, requests=data.requests, duration_s=data.duration_s)


def options_for(spec: Any) -> ParseOptions:
    """`spec` is an uploads.schemas.FileIn or the options dict stored on a RunFile."""
    get = spec.get if isinstance(spec, dict) else (lambda k, d=None: getattr(spec, k, d))
    entry = get("entry")
    return ParseOptions(load=load_from(get("load")), scenario=get("scenario"),
                        timestamp_format=get("timestamp_format"), timestamp_zone=get("timestamp_zone"),
                        entry=int(entry) if entry is not None else None)

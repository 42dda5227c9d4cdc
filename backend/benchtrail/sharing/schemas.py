from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchtrail.openapi import INT4_MAX
from benchtrail.trails.settings import (AB_METRIC_DESCRIPTION, AB_METRICS, METRIC_DESCRIPTION, TRAIL_METRICS,
                                       known_metric)
from benchtrail.validation import SafeModel

SnapshotKind = Literal["run", "compare", "history"]
METRIC_ENUM: dict[str, Any] = {"enum": sorted(TRAIL_METRICS)}
AB_METRIC_ENUM: dict[str, Any] = {"enum": sorted(AB_METRICS)}


class SnapshotView(SafeModel):
    """The frozen view's URL: kept as given and handed back, so the page opens as it was."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(default="", max_length=500, description="e.g. /r/abc")
    query: str = Field(default="", max_length=2000, description="The view state, e.g. load=50&p=p99")


class CompareSpec(SafeModel):
    """The compare view to freeze: run b against run a for one metric (as `GET /compare`)."""

    model_config = ConfigDict(extra="forbid")
    a: str = Field(min_length=1, max_length=16, description="Slug of run a (the older side)")
    b: str = Field(min_length=1, max_length=16, description="Slug of run b")
    metric: str = Field(default="latency_p75", description=AB_METRIC_DESCRIPTION, json_schema_extra=AB_METRIC_ENUM)
    a_variant: str | None = Field(default=None, min_length=1, max_length=200)
    b_variant: str | None = Field(default=None, min_length=1, max_length=200)

    _metric = field_validator("metric")(partial(known_metric, known=AB_METRICS))


class HistorySpec(SafeModel):
    """The history view to freeze: one trail (or its overhead trail) for one metric."""

    model_config = ConfigDict(extra="forbid")
    trail: int = Field(ge=1, le=INT4_MAX, description="The trail's id")
    metric: str = Field(default="latency_p75", description=METRIC_DESCRIPTION, json_schema_extra=METRIC_ENUM)
    kind: Literal["trail", "overhead"] = Field(default="trail", description="The values, or the overhead vs reference")

    _metric = field_validator("metric")(known_metric)


class SnapshotCreate(SafeModel):
    """Exactly one of `run`, `compare`, `history`: the view whose data is frozen."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "oneOf": [{"required": [k], "properties": {k: {"not": {"type": "null"}}}}
                  for k in ("run", "compare", "history")]})
    run: str | None = Field(default=None, description="Slug of the run whose view is frozen", min_length=1,
                            max_length=16)
    compare: CompareSpec | None = None
    history: HistorySpec | None = None
    view: SnapshotView = Field(default_factory=SnapshotView)
    title: str | None = Field(default=None, max_length=300)

    @model_validator(mode="after")
    def _one_view(self) -> SnapshotCreate:
        given = [k for k in ("run", "compare", "history") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of run, compare, history (got {', '.join(given) or 'none'})")
        return self

    @property
    def kind(self) -> SnapshotKind:
        return "compare" if self.compare is not None else "history" if self.history is not None else "run"


class SnapshotOut(BaseModel):
    slug: str
    project: str
    kind: SnapshotKind
    title: str
    view: SnapshotView
    data: dict[str, Any] = Field(description=(
        "The API answers the view showed when frozen. run: `run` (the run document) and `overheads` (metric -> "
        "the run's overheads); compare: `compare` (GET /compare), `a` and `b` (the run documents), `metric`; "
        "history: `trail` (GET /trails/{id} or /trails/{id}/overhead) and `kind` (trail | overhead)"))
    markdown: str = Field(description="The seed-shaped tables of the frozen data")
    created_by: str
    created_at: datetime
    permalink: str

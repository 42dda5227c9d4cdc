from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from benchtrail.alerts.schemas import AnnotationOut


class TrailOut(BaseModel):
    id: int
    env_fingerprint: str
    environment: str | None
    scenario: str
    load_key: str
    load_label: str | None
    variant: str
    mode: str
    points: int = Field(description="Runs on this trail (completed, valid or not)")


class TrailList(BaseModel):
    items: list[TrailOut]


class ChangePointOut(BaseModel):
    run: str
    agent_version: str | None
    index: int
    p_value: float | None
    magnitude_abs: float | None
    magnitude_rel: float | None
    direction: str
    before_mean: float | None
    after_mean: float | None
    effect_sigma: float | None
    known: bool


class TrailPoint(BaseModel):
    run: str
    agent_version: str | None
    commit: str | None
    created_at: datetime
    value: float
    error: float | None = Field(default=None, description="JMH score error (± at 99.9%), for the score metric")
    is_valid: bool


class AlertBrief(BaseModel):
    id: int
    state: str
    kind: str
    direction: str
    metric: str
    run: str
    summary: str
    permalink: str


class TrailDetail(BaseModel):
    trail: TrailOut
    metric: str
    unit: str
    direction: str
    points: list[TrailPoint]
    change_points: list[ChangePointOut]
    alerts: list[AlertBrief]
    annotations: list[AnnotationOut]


class AbOut(BaseModel):
    """Variant (or run b) minus reference (or run a); intervals are 95%, of the difference."""

    statistic: str
    reference: float
    variant: float
    abs_diff: float
    rel_diff: float | None
    ci_low: float | None
    ci_high: float | None
    ci_low_rel: float | None
    ci_high_rel: float | None
    mw_p: float | None
    cliffs_delta: float | None
    verdict: str
    worse: bool | None
    mde: float | None
    mde_rel: float | None
    n_ref: int
    n_var: int
    method: str


class OverheadPoint(BaseModel):
    run: str
    agent_version: str | None
    commit: str | None
    created_at: datetime
    is_valid: bool
    value_pct: float = Field(description="The trail's value: 100 · rel_diff (percent of the reference)")
    abs_diff: float
    rel_diff: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str


class OverheadTrail(BaseModel):
    trail: TrailOut
    reference_variant: str | None
    metric: str
    points: list[OverheadPoint]
    change_points: list[ChangePointOut]
    alerts: list[AlertBrief]


class CellKey(BaseModel):
    scenario: str
    load_key: str
    load_label: str
    mode: str


class RunOverhead(BaseModel):
    cell: CellKey
    variant: str
    reference_variant: str
    cell_id: int
    ref_cell_id: int
    trail_id: int
    result: AbOut


class RunOverheads(BaseModel):
    run: str
    metric: str
    items: list[RunOverhead]


class CompareRow(BaseModel):
    cell: CellKey
    metric: str
    a_variant: str
    b_variant: str
    a_cell_id: int
    b_cell_id: int
    result: AbOut


class CompareOut(BaseModel):
    a: str
    b: str
    metric: str | None
    items: list[CompareRow]


class SettingsOut(BaseModel):
    analysis: dict[str, Any]

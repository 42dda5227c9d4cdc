from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from benchtrail.alerts.schemas import AnnotationOut
from benchtrail.metrics import Direction


class TrailOut(BaseModel):
    id: int
    env_fingerprint: str
    environment: str | None
    scenario: str
    load_key: str
    load_label: str | None
    variant: str
    mode: str
    process: str = Field(default="", description="A named process of the variant (plan `processes`), "
                                                 "e.g. consumer; '' for the variant as a whole")
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


class TrailWindow(BaseModel):
    """Which part of a long trail an answer holds (`before`, `limit`, `max_points`)."""

    total_points: int = Field(0, description="Points in the whole trail")
    window_start: int = Field(0, description="Position of the first point of this window in the whole trail")
    earlier: str | None = Field(None, description="Pass as `before` to get the window of earlier points; "
                                                   "null when this window starts at the first point")
    downsampled: bool = Field(False, description="Points were thinned to `max_points` (every change point, "
                                                 "alerted run and each bucket's extremes kept)")


class TrailDetail(TrailWindow):
    trail: TrailOut
    metric: str
    unit: str
    direction: Direction = Field(description="Which way the metric is better (a JMH score's follows its unit)")
    points: list[TrailPoint]
    change_points: list[ChangePointOut]
    alerts: list[AlertBrief]
    annotations: list[AnnotationOut]


class RepetitionValues(BaseModel):
    """The statistic of every repetition behind a result, in the run's execution order."""

    reference: list[float | None] = Field(default_factory=list,
                                          description="The reference (or run a) cell's value per repetition")
    variant: list[float | None] = Field(default_factory=list,
                                        description="The variant (or run b) cell's value per repetition")
    reference_positions: list[int | None] = Field(
        default_factory=list, description="Each reference repetition's place in the run's execution order "
                                          "(its file's position); pairs are matched by it when `paired`")
    variant_positions: list[int | None] = Field(default_factory=list,
                                                description="Each variant repetition's place in execution order")


class AbOut(BaseModel):
    """Variant (or run b) minus reference (or run a); intervals are 95%, of the difference. The unit
    of evidence is the repetition: see `method`."""

    statistic: str = Field(description="'mean' or the percentile compared ('p75', 'p99.9', ...)")
    reference: float = Field(description="The reference's statistic: the mean of its per-repetition values")
    variant: float = Field(description="The variant's statistic: the mean of its per-repetition values")
    abs_diff: float = Field(description="variant - reference, in the metric's unit")
    rel_diff: float | None = Field(description="abs_diff / |reference|")
    ci_low: float | None = Field(description="95% interval of abs_diff, low end (None: no interval)")
    ci_high: float | None
    ci_low_rel: float | None = Field(description="The interval relative to |reference|")
    ci_high_rel: float | None
    mw_p: float | None = Field(description="Mann-Whitney two-sided p over the per-repetition values "
                                           "(None with fewer than 2 repetitions a side)")
    cliffs_delta: float | None = Field(description="Cliff's delta P(variant > reference) - P(variant < reference) "
                                                   "over the per-repetition values (over the samples, "
                                                   "descriptively, with one repetition a side)")
    verdict: str = Field(description="no difference | small | medium | large | too noisy to tell")
    worse: bool | None
    mde: float | None = Field(description="Minimum detectable effect: the smallest |abs_diff| this evidence "
                                          "finds with 80% power at the 5% level")
    mde_rel: float | None
    n_ref: int = Field(description="Repetitions of the reference (time intervals for block-bootstrap-time)")
    n_var: int = Field(description="Repetitions of the variant (time intervals for block-bootstrap-time)")
    method: str = Field(description=(
        "How the interval was computed. t-repetitions: Student t over the per-repetition values (pooled "
        "variance, equal repetitions a side); welch-t-repetitions: Welch t (unequal repetitions); "
        "paired-t-repetitions: paired t over repetitions matched by execution order (interleaved, 5+ "
        "pairs); block-bootstrap-time: one repetition a side, stationary block bootstrap over its "
        "time-ordered intervals (within-run noise only; 'too noisy to tell' when effective_n < 10); "
        "no-time-order: one histogram a side, no interval; bootstrap-replicates: bootstrap over JMH "
        "iterations; welch-score-error: from JMH score errors; point: values only. For a latency "
        "percentile of files that record latency in steps (JMeter whole ms, hey 0.1 ms), each side's rounding, "
        "uniform over one step (variance step²/12), is added to the variance of the difference"))
    p_value: float | None = Field(default=None, description="p-value of the test the interval comes from")
    paired: bool = Field(default=False, description="Repetitions were paired by execution order")
    repetitions: RepetitionValues = Field(default_factory=RepetitionValues,
                                          description="The per-repetition values behind this result")
    block_length: float | None = Field(default=None, description="block-bootstrap-time: mean block length "
                                                                 "(intervals) from the measured autocorrelation")
    effective_n: float | None = Field(default=None, description="block-bootstrap-time: intervals / block "
                                                                "length, the smaller of the two sides")


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


class OverheadTrail(TrailWindow):
    trail: TrailOut
    reference_variant: str | None
    metric: str
    unit: str = Field(description="The unit of abs_diff, ci_low and ci_high (a JMH score's: its mode's, e.g. us/op)")
    direction: Direction = Field(description=(
        "Which way the metric is better; a positive overhead is worse when 'lower'. A JMH score's follows its "
        "unit: ops/time is better higher, time/op lower"))
    points: list[OverheadPoint]
    change_points: list[ChangePointOut]
    alerts: list[AlertBrief]


class CellKey(BaseModel):
    scenario: str
    load_key: str
    load_label: str
    mode: str
    process: str = Field(default="", description="A named process of the variant (plan `processes`); "
                                                 "'' for the variant as a whole")


class AdjustedOverCells(BaseModel):
    """An A/B result among others answered together (`benchtrail.multiplicity`)."""

    p_adjusted: float | None = Field(default=None, ge=0, le=1, description=(
        "result.p_value adjusted (Benjamini-Hochberg) over every item of this answer that has one: the cell's "
        "verdict holds over all of them, at a false discovery rate of 5%, when this is below 0.05. Null without "
        "a p-value"))


class RunOverhead(AdjustedOverCells):
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


class CompareRow(AdjustedOverCells):
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

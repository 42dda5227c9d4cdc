from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, RootModel, create_model
from benchtrail.runstate.meta import RunMeta
from benchtrail import metrics
from benchtrail.runstate.summary import RunSummary


class EnvironmentOut(BaseModel):
    id: int
    name: str
    fingerprint: str
    cpus: float | None
    memory_mb: int | None
    instance_type: str | None
    os: str | None
    runtime: str | None
    attributes: dict[str, Any]


class VariantOut(BaseModel):
    id: int
    name: str
    is_reference: bool


class ScenarioOut(BaseModel):
    id: int
    name: str


class LoadOut(BaseModel):
    id: int
    key: str
    kind: str
    value: float | None
    requests: int | None
    duration_s: float | None
    label: str


class _CellOut(BaseModel):
    id: int
    variant_id: int
    scenario_id: int
    load_id: int
    trail_id: int
    mode: str
    source: str
    is_transaction: bool
    count: int | None
    errors: int | None
    error_rate: float | None
    throughput: float | None
    duration_s: float | None
    latency_mean: float | None
    latency_min: float | None
    latency_max: float | None
    latency_p50: float | None
    latency_p75: float | None
    latency_p90: float | None
    latency_p95: float | None
    latency_p99: float | None
    latency_p999: float | None
    has_histogram: bool
    cpu_pct: float | None
    cpu_s_per_1k: float | None
    rss_mb: float | None
    heap_mb: float | None
    achieved_rate: float | None
    score: float | None
    score_error: float | None
    score_unit: str | None
    params: dict[str, Any]
    replicates: list[float]
    extra: dict[str, Any]


# A cell in the run document: its columns above, and a field for every other metric of the catalog (computed from
# the cell's histogram, `ingest.values`), so a metric added to the catalog is in the document, the tables and the
# client's types (`make openapi`) without more.
CellOut = create_model(
    "CellOut", __base__=_CellOut, __doc__="One cell of a run: counts, latency statistics (ms), resources, a JMH score",
    **{m.name: (float | None, Field(default=None, description=f"{m.title} ({m.unit})"))
       for m in metrics.CATALOG.values() if m.name not in _CellOut.model_fields})


class ProcessCellOut(BaseModel):
    """A resource cell of one named process of a variant (plan `processes`: consumer, provider) at a
    load level: means over the measured time of every repetition; `repetitions` holds each
    repetition's values (the overhead's t interval is over them)."""

    id: int
    variant_id: int
    load_id: int
    trail_id: int
    process: str
    cpu_pct: float | None
    cpu_s_per_1k: float | None
    rss_mb: float | None
    heap_mb: float | None
    repetitions: list[dict[str, float]]


class RunFileOut(BaseModel):
    id: int
    filename: str
    variant: str
    format: str
    size: int
    sha256: str
    download_url: str
    share: int | None = Field(default=None, description="The share (0-based) whose runner sent the file, in a "
                                                        "run over several generators")


class ShareOut(BaseModel):
    """One share of a run over several load generators (plan `generators`)."""

    index: int = Field(description="0-based; shown as share index+1 of N")
    status: Literal["queued", "running", "delivered", "failed", "cancelled"]
    runner: str | None = Field(description="The runner (BENCHTRAIL_RUNNER_NAME) that claimed the share")
    host: str | None = Field(description="That runner's host name")
    reason: str | None = Field(description="Why the share failed or stopped")
    claimed_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None




class RunAlert(BaseModel):
    id: int
    summary: str
    metric: str
    kind: str
    direction: str
    magnitude_abs: float
    magnitude_rel: float | None
    p_value: float | None
    run: str
    state: str
    permalink: str
    run_permalink: str


class RunDetail(RunSummary):
    analysis_status: str = "pending"
    alerts: list[RunAlert] = []
    status_detail: dict[str, Any] | None
    validity: list[dict[str, Any]]
    criteria: list[dict[str, Any]]
    progress: dict[str, Any]
    environment_detail: EnvironmentOut | None
    variants: list[VariantOut]
    scenarios: list[ScenarioOut]
    loads: list[LoadOut]
    cells: list[CellOut]
    process_cells: list[ProcessCellOut] = Field(
        default=[], description="Resource cells of the variants' named processes (not in `cells`)")
    files: list[RunFileOut]
    shares: list[ShareOut] = Field(default=[], description="The shares of a run over several load generators "
                                                           "(empty for one generator)")
    meta: RunMeta
    remeasured_at: datetime | None = Field(default=None, description=(
        "When its cells and series were last measured again from its stored files by this server's parsers "
        "(`benchtrail admin reingest`); null if never"))


class RunPage(BaseModel):
    items: list[RunSummary]
    total: int
    page: int
    per_page: int
    next_cursor: str | None = Field(None, description="Pass as `cursor` for the next page (keyset "
                                                      "pagination); null on the last page")


class SeriesOut(BaseModel):
    id: int
    variant_id: int
    scenario_id: int | None
    load_id: int
    metric: str
    process: str = Field(default="", description="A named process of the variant (plan `processes`); "
                                                 "'' for the variant as a whole")
    interval_ms: int | None
    t_ms: list[int]
    values: list[float]


class SeriesList(BaseModel):
    items: list[SeriesOut]


class PercentilePoint(BaseModel):
    percentile: float
    value_ms: float


class CellPercentiles(BaseModel):
    cell_id: int
    points: list[PercentilePoint]


class PercentilesOut(BaseModel):
    items: list[CellPercentiles]


class ExclusionIn(BaseModel):
    reason: str = Field(min_length=1, max_length=500, pattern=r"\S",
                        description="Why the run does not measure what its trails track (shown on the run)")


class ExclusionOut(BaseModel):
    run: str
    excluded: bool
    reason: str | None = Field(description="Why it was excluded; null when it is not")
    by: str | None = Field(description="The name of the token that excluded it; null when it is not excluded")
    is_valid: bool = Field(description="Whether the run's points are in its trails: not excluded and no failed check")
    analysis_status: str = Field(description="'pending' until its trails have been judged again")


class BmfOut(RootModel[dict[str, dict[str, dict[str, float]]]]):
    """Bencher Metric Format: {benchmark: {measure: {value, lower_value?, upper_value?}}}."""

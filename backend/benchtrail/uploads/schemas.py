from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from benchtrail.validation import SafeModel


# The last millisecond of year 9999: a bound that keeps epoch times in range for datetime and JSON.
MAX_EPOCH_MS = 253_402_300_799_999


class EnvironmentIn(SafeModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    cpus: float | None = Field(default=None, ge=0, le=1_000_000, allow_inf_nan=False)
    memory_mb: int | None = Field(default=None, ge=0, le=2**31 - 1)
    instance_type: str | None = None
    os: str | None = None
    runtime: str | None = None
    attributes: dict[str, str] = Field(default_factory=dict)


class LoadIn(SafeModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["threads", "concurrency", "rate", "requests", "duration", "none"]
    value: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    requests: int | None = Field(default=None, ge=0, le=2**63 - 1)
    duration_s: float | None = Field(default=None, ge=0, allow_inf_nan=False)


PROFILE_FORMATS = ("pprof", "collapsed", "jfr", "benchtrail-profile")


class ProfileFileIn(SafeModel):
    """A CPU profile of the file's variant in one measured step (docs/explanation/profiles.md)."""

    model_config = ConfigDict(extra="forbid")
    runtime: Literal["jvm", "go", "python"]
    repetition: int = Field(default=1, ge=1, le=1_000_000, description="The repetition the step measured")
    step: int | None = Field(default=None, ge=0, le=1_000_000, description=(
        "The step's place in the run: files of one step's profile (pieces of a Go profile) share it; "
        "default: the file's position"))
    window_ms: tuple[int, int] | None = Field(default=None, description=(
        "The load's window in the step (epoch ms, first request to last response): samples with a time "
        "outside it are left out"))
    raw_file: int | None = Field(default=None, ge=0, le=999, description=(
        "benchtrail-profile: the position (in `files`) of the raw recording its stacks were read from, kept "
        "for download"))
    requests: int | None = Field(default=None, ge=1, le=2**63 - 1, description=(
        "The step's request count, when no sample file of the step (same variant, load and `started_ms`) "
        "tells it"))
    agent_packages: list[str] = Field(default_factory=list, max_length=20, description=(
        "Names of the agent's own code besides the known agents' packages"))
    period_ms: float | None = Field(default=None, gt=0, le=10_000, allow_inf_nan=False, description=(
        "collapsed: the sampling period (each sample weighs this many CPU ms)"))


class FileIn(SafeModel):
    """How to read one uploaded file; files are matched to parts by position."""

    model_config = ConfigDict(extra="forbid")
    variant: str = Field(min_length=1, max_length=100)
    format: str | None = Field(default=None, description="Overrides auto-detection, e.g. jmeter-csv")
    scenario: str | None = Field(default=None, description="Scenario name for single-scenario summaries")
    load: LoadIn | None = Field(default=None, description="Load level, when the tool output lacks it")
    warmup_s: float = Field(default=0, ge=0, allow_inf_nan=False, description="Leading seconds left out of cells, kept in series")
    series_only: bool = Field(default=False, description="A warm-up output: kept in series, never in cells")
    started_ms: int | None = Field(
        default=None, ge=0, le=MAX_EPOCH_MS,
        description="When the tool started, in ms since the epoch, for a file whose times count from its own "
                    "start (hey CSV's offset): its series are placed at that time (to the series interval), so "
                    "the warm-up and the repetitions of a load level follow each other on one time axis as they "
                    "ran. Without it, such a file is laid after the previous one of its variant (from the first "
                    "whole interval after its last end), in upload order, each variant beginning at 0. Ignored "
                    "for files with their own clock times and for a share's files.")
    profile: ProfileFileIn | None = Field(default=None, description=(
        "A CPU profile (format pprof, jfr or benchtrail-profile): the step it profiled. A jfr recording is kept "
        "for download; its stacks come from the benchtrail-profile file that names it in `raw_file`"))

    @model_validator(mode="after")
    def _profile_matches_format(self) -> FileIn:
        if self.format in PROFILE_FORMATS and self.profile is None:
            raise ValueError(f"a {self.format} file is a CPU profile: describe it in `profile` (runtime, repetition)")
        if self.format == "collapsed" and self.profile is not None and self.profile.period_ms is None:
            raise ValueError("a collapsed profile needs its sampling period: profile.period_ms")
        if self.profile is not None and self.format not in PROFILE_FORMATS:
            raise ValueError(f"`profile` describes a CPU profile: give its format ({', '.join(PROFILE_FORMATS)})")
        return self


CriterionMetric = Literal["latency_mean", "latency_p50", "latency_p75", "latency_p90", "latency_p95", "latency_p99",
                          "latency_p999", "latency_max", "error_rate", "throughput", "achieved_rate", "cpu_pct",
                          "rss_mb", "heap_mb", "cpu_s_per_1k"]


class CriterionIn(SafeModel):
    """A pass/fail criterion, as a plan's `criteria` entry (docs/plans/plan-v1.schema.json)."""

    model_config = ConfigDict(extra="forbid")
    metric: CriterionMetric
    op: Literal["<", "<=", ">", ">="]
    value: float = Field(allow_inf_nan=False, description="In the metric's unit (ms, %, req/s, MB)")
    variant: str | None = Field(default=None, max_length=100, description="Only this variant (default: every variant)")
    scenario: str | None = Field(default=None, max_length=200, description="Only this scenario (default: all scenarios)")
    overhead: bool = Field(default=False, description="Variant minus reference instead of the variant's own value")


class UploadMetadata(SafeModel):
    model_config = ConfigDict(extra="forbid")
    environment: EnvironmentIn | None = None
    tool: str | None = None
    agent_version: str | None = None
    app_version: str | None = None
    commit: str | None = None
    branch: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    reference: str | None = Field(default=None, description="Reference variant; default: the first")
    started_at: datetime | None = None
    source: Literal["upload", "manual", "schedule"] = "upload"
    files: list[FileIn] = Field(min_length=1)
    criteria: list[CriterionIn] = Field(default_factory=list, max_length=100, description=(
        "Pass/fail criteria judged on the run's cells, as a plan's (results in the run's `criteria`)"))
    file_checks: bool = Field(default=False, description=(
        "Judge each sample file's error rate (and, for a rate load, achieved vs requested rate) as a plan "
        "run does; a failed check makes the run invalid"))

    @model_validator(mode="after")
    def _raw_files_are_recordings(self) -> UploadMetadata:
        for i, f in enumerate(self.files):
            raw = f.profile.raw_file if f.profile is not None else None
            if raw is None:
                continue
            if f.format != "benchtrail-profile":
                raise ValueError(f"files[{i}].profile.raw_file: only a benchtrail-profile file names a raw recording")
            if raw >= len(self.files) or self.files[raw].format not in ("jfr", "collapsed"):
                raise ValueError(f"files[{i}].profile.raw_file: files[{raw}] is not a raw profile (jfr) of this upload")
        return self


class UploadAccepted(BaseModel):
    run: str = Field(description="Run slug")
    id: int
    status: str
    permalink: str
    status_url: str
    duplicate: bool = False

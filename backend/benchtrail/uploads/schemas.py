from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from benchtrail import metrics
from benchtrail.validation import SafeModel
from benchtrail.runstate.environments import EnvironmentIn


# The last millisecond of year 9999: a bound that keeps epoch times in range for datetime and JSON.
MAX_EPOCH_MS = 253_402_300_799_999
# A file's warm-up: at most a week (a soak test's first hours, not more), so that a sample's time plus it stays an
# epoch millisecond (a 64-bit integer) when the ingest compares them.
MAX_WARMUP_S = 7 * 86_400


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
    warmup_s: float = Field(default=0, ge=0, le=MAX_WARMUP_S, allow_inf_nan=False,
                            description="Leading seconds left out of cells, kept in series (at most a week)")
    series_only: bool = Field(default=False, description="A warm-up output: kept in series, never in cells")
    timestamp_format: str | None = Field(
        default=None, max_length=100,
        description="A JMeter CSV's timeStamp pattern (jmeter.save.saveservice.timestamp_format, Java SimpleDateFormat, "
                    "e.g. 'yyyy/MM/dd HH:mm:ss') when it is not epoch ms; default: inferred from the values")
    timestamp_zone: str | None = Field(
        default=None, max_length=64,
        description="The time zone a formatted JMeter timeStamp was written in (the JVM's default zone: an IANA "
                    "name such as Europe/Paris, or an offset such as +02:00); default: the zone in the values, "
                    "else UTC")
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


CriterionMetric = Literal[metrics.names("criterion")]  # type: ignore[valid-type]   # the catalog's


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


class AcceptedFile(BaseModel):
    """How one uploaded file was read."""

    filename: str
    variant: str
    format: str = Field(description="The format the file was read as")
    detected: bool = Field(description="True: found by detection (docs/how-to/formats.md, 'Detection'); false: "
                                       "the upload named it (`format`), which always wins")


class UploadAccepted(BaseModel):
    run: str = Field(description="Run slug")
    files: list[AcceptedFile] = Field(default_factory=list, description="Each file, in upload order, and the "
                                                                         "format it was read as")
    id: int
    status: str
    permalink: str
    status_url: str
    duplicate: bool = False


class ImportMetadata(SafeModel):
    """How to import a history: one run per entry, backdated to the entry's time."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["gab-history", "bencher-reports"] | None = Field(
        default=None, description="github-action-benchmark data.js / JSON, or Bencher reports; default: detected")
    variant: str = Field(default="baseline", min_length=1, max_length=100, description="The variant of every run")
    environment: EnvironmentIn | None = Field(
        default=None, description="Where the runs ran; default: a Bencher report's testbed, else the project's "
                                  "default environment")
    branch: str | None = Field(default=None, max_length=200, description="Default: a Bencher report's branch")
    tool: str | None = Field(default=None, max_length=32)
    labels: dict[str, str] = Field(default_factory=dict, description="Added to every run's labels")


class ImportedRun(BaseModel):
    run: str = Field(description="Run slug")
    id: int
    status: str
    permalink: str
    status_url: str
    entry: int = Field(description="The entry of the history the run is (in time order, from 0)")
    started_at: datetime
    commit: str | None
    benchmarks: int = Field(description="Benchmarks (github-action-benchmark) or result iterations (Bencher) of "
                                        "the entry")
    duplicate: bool = Field(default=False, description="Imported before (same file bytes and entry): the existing run")


class ImportAccepted(BaseModel):
    format: str = Field(description="The format the history was read as")
    imported: int = Field(description="Runs made by this import")
    already: int = Field(description="Entries imported before, left as they were")
    runs: list[ImportedRun] = Field(description="One run per entry, oldest first")


class ResultsUploadFile(SafeModel):
    name: str = Field(min_length=1, max_length=255, description="The file's name (as in a multipart upload)")
    size: int = Field(ge=1, le=2**53, description="Bytes of this file in the package")
    sha256: str = Field(pattern="^[0-9a-f]{64}$", description="Checked when the upload is committed")


class ResultsAccepted(BaseModel):
    run: str
    status: str
    duplicate: bool = Field(default=False, description="True: these results (same Idempotency-Key) were "
                                                       "already accepted; nothing new was stored")


class ResultsUploadIn(SafeModel):
    """Opens a resumable results upload: the package is the files' bytes one after the other, in order."""

    metadata: dict[str, Any] = Field(description="ResultsMetadata (as for POST /runs/{run}/results); "
                                                 "files[i] describes the i-th file")
    files: list[ResultsUploadFile] = Field(min_length=1, max_length=1000)


class ResultsUploadOut(BaseModel):
    id: str = Field(description="The upload session (in the path of its chunks and commit)")
    run: str
    offset: int = Field(description="Bytes of the package the server holds: send the next chunk from here")
    size: int = Field(description="The package's declared size in bytes")
    committed: bool = Field(description="True: the package was committed into the run's results")
    chunk_max_bytes: int = Field(description="The largest chunk the server takes")

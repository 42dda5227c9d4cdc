"""Per-project analysis settings, stored in projects.settings["analysis"].

Thresholds apply to trails and overhead trails alike, in the same unit: a change of at least
`min_magnitude_pct` percent of the baseline level. For a trail the baseline is the level before the
change; for an overhead trail (whose values are already percent of the reference variant) it is the
reference, so the threshold is in percentage points of added cost.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator
from benchtrail.validation import SafeModel

from benchtrail import metrics
from benchtrail.analysis import Settings

DEFAULT_METRICS = metrics.names("default")
# Changes under 1% are what the A/B verdict calls "no difference" (and below the print resolution of
# reported results, e.g. JMH's 0.001 on 0.48 ops/ms); they are not alerted unless a project asks.
DEFAULT_MIN_MAGNITUDE_PCT = 1.0
# The metrics trails follow, and those an A/B comparison answers (a run's overheads, GET /compare): the catalog's.
TRAIL_METRICS = frozenset(metrics.names("trail"))
AB_METRICS = frozenset(metrics.names("compare"))
METRIC_DESCRIPTION = "A metric of the catalog that trails follow"
AB_METRIC_DESCRIPTION = "A metric of the catalog that trails follow, or error_rate"


def known_metric(name: str, known: frozenset[str] = TRAIL_METRICS) -> str:
    """`name` when it is one of `known`; ValueError naming them otherwise."""
    if name not in known:
        raise ValueError(f"unknown metric '{name}'; known: {', '.join(sorted(known))}")
    return name


class DetectionIn(SafeModel):
    model_config = ConfigDict(extra="forbid")
    direction: Literal["lower", "higher"] | None = Field(
        default=None, description="Which way is better; default: the metric's own direction")
    min_magnitude_pct: float | None = Field(default=None, ge=0)
    min_effect_sigma: float | None = Field(default=None, ge=0)
    p_value: float | None = Field(default=None, gt=0, le=1)
    min_segment: int | None = Field(default=None, ge=2, le=50)
    window: int | None = Field(default=None, ge=4, le=1000)


class AnalysisSettings(SafeModel):
    model_config = ConfigDict(extra="forbid")
    metrics: list[str] = Field(default_factory=lambda: list(DEFAULT_METRICS),
                               description="Metrics whose trails and overheads are analysed",
                               json_schema_extra={"items": {"type": "string", "enum": sorted(TRAIL_METRICS)}})
    confirm_scheduled: bool = Field(
        default=False, description="Scheduled runs that suspect a regression are re-run once; "
                                   "the alert is raised only if the re-run confirms it")
    detection: DetectionIn = Field(default_factory=DetectionIn, description="Defaults for every metric")
    per_metric: dict[str, DetectionIn] = Field(default_factory=dict,
                                               json_schema_extra={"propertyNames": {"enum": sorted(TRAIL_METRICS)}})

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        unknown = [m for m in value if m not in TRAIL_METRICS]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)}; known: {', '.join(sorted(TRAIL_METRICS))}")
        return list(dict.fromkeys(value))

    @field_validator("per_metric")
    @classmethod
    def _known_keys(cls, value: dict[str, DetectionIn]) -> dict[str, DetectionIn]:
        unknown = [m for m in value if m not in TRAIL_METRICS]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)} in per_metric")
        return value


def load(project_settings: dict[str, Any] | None) -> AnalysisSettings:
    return AnalysisSettings.model_validate((project_settings or {}).get("analysis") or {})


def detector_settings(cfg: AnalysisSettings, metric: str, unit: str | None = None) -> Settings:
    """The detector's Settings for one metric: package defaults < project defaults < per-metric."""
    direction = metrics.direction_of(metric, unit)
    s = Settings(direction=direction, min_magnitude_pct=DEFAULT_MIN_MAGNITUDE_PCT)
    for layer in (cfg.detection, cfg.per_metric.get(metric)):
        if layer is not None:
            s = replace(s, **{k: v for k, v in layer.model_dump().items() if v is not None})
    return s


def settings_key(s: Settings, known_run_ids: list[int]) -> str:
    """Identifies what a stored analysis depends on besides the data: when it changes (new
    thresholds, an annotation or an accepted alert), the trail is analysed again from scratch."""
    body = json.dumps([repr(s), sorted(known_run_ids)])
    return hashlib.sha256(body.encode()).hexdigest()

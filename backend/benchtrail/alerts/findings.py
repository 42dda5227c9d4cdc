"""What trail analysis hands to alerts: per trail, metric and kind, the changes a window of the trail
shows, and what became of the open alerts inside it. Plain records: alerts never imports trails."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Change:
    """A change point: the run where the new level starts (the culprit) and its size."""

    culprit_run_id: int
    direction: str              # regression | improvement
    before_mean: float
    after_mean: float
    magnitude_abs: float
    magnitude_rel: float | None
    p_value: float
    effect_sigma: float | None

    @staticmethod
    def finite(v: float | None) -> float | None:
        return v if v is not None and math.isfinite(v) else None


@dataclass(slots=True)
class TrailFindings:
    """The review of one window of a trail (kind 'trail') or its overhead trail ('overhead').

    order: run ids of the window in x-axis order (positions decide which alert a change matches);
    changes: change points found inside the re-analysed part of the window, to be alerted unless an
      alert already stands for them;
    supported: open alerts the window still shows, by alert id, as found now (the culprit may have
      moved when runs arrived between);
    withdrawn: open alerts the window no longer shows, by alert id, with the reason;
    current: the analysed run's own value on this trail, if it has one."""

    trail_id: int
    metric: str
    kind: str
    order: list[int]
    changes: list[Change] = field(default_factory=list)
    supported: dict[int, Change] = field(default_factory=dict)
    withdrawn: dict[int, str] = field(default_factory=dict)
    current: float | None = None

    @property
    def key(self) -> tuple[int, str, str]:
        return (self.trail_id, self.metric, self.kind)


@dataclass(slots=True)
class Applied:
    created: list[int] = field(default_factory=list)
    withdrawn: list[int] = field(default_factory=list)
    reinstated: list[int] = field(default_factory=list)
    moved: list[int] = field(default_factory=list)

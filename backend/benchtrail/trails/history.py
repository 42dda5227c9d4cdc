"""A trail's points in x-axis order, its change points, and the review of a window of it.

Pure functions over rows already loaded: no queries here.

A run's place on the x-axis is `trail_order_key` (semantic version, then time) plus the run id; the
same order is encoded as bytes (`order_bytes`) and stored on the run's cells, so the database can
hand the analysis the points around a new one without loading the trail.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from benchtrail.analysis import ChangePoint, Settings, analyse, trail_order_key

# Two change points this close (in points of the trail) are the same change seen twice.
NEARBY = 2


@dataclass(slots=True)
class Point:
    run_id: int
    slug: str
    agent_version: str | None
    commit: str | None
    created_at: datetime
    started_at: datetime | None
    is_valid: bool
    value: float
    replicates: Sequence[float] = field(default_factory=tuple)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def order_key(self) -> tuple[Any, ...]:
        return (trail_order_key(self.agent_version, None, self.started_at or self.created_at), self.run_id)

    @property
    def key(self) -> bytes:
        return order_bytes(self.agent_version, self.started_at or self.created_at, self.run_id)


def point(run_row: Any, value: float, **kw: Any) -> Point:
    """From the run columns of `repository.trail_cells` / `overhead_points`."""
    run_id, slug, agent_version, commit, created_at, started_at, is_valid = run_row
    return Point(run_id, slug, agent_version, commit, created_at, started_at, bool(is_valid), float(value), **kw)


def ordered(points: list[Point]) -> list[Point]:
    return sorted(points, key=lambda p: p.order_key)


# ---------------------------------------------------------------------------------------------------
# the x-axis order as bytes (memcmp order == Python tuple order of Point.order_key)

_END, _INT, _FLOAT, _STR, _TUPLE = b"\x00", b"\x02", b"\x03", b"\x04", b"\x05"


def _encode(value: Any, out: bytearray) -> None:
    if isinstance(value, bool) or isinstance(value, int):
        n = int(value)
        if n < 0:
            raise ValueError("order keys hold non-negative integers only")
        raw = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
        out += _INT + bytes([len(raw)]) + raw           # longer = larger
    elif isinstance(value, float):
        bits = bytearray(struct.pack(">d", value))
        if bits[0] & 0x80:
            bits = bytearray(b ^ 0xFF for b in bits)     # negative: reverse the order
        else:
            bits[0] |= 0x80
        out += _FLOAT + bits
    elif isinstance(value, str):
        out += _STR + value.encode().replace(b"\x00", b"\x00\xff") + b"\x00\x01"
    elif isinstance(value, tuple):
        out += _TUPLE
        for v in value:
            _encode(v, out)
        out += _END                                       # a prefix sorts before its extensions
    else:
        raise TypeError(f"cannot encode {type(value).__name__} in an order key")


@functools.lru_cache(maxsize=1 << 16)
def order_bytes(agent_version: str | None, when: datetime | None, run_id: int) -> bytes:
    """A run's place on the x-axis as bytes. Cached (a pure function of its arguments): an analysis or a
    trail read keys the same runs once per metric."""
    out = bytearray()
    _encode((trail_order_key(agent_version, None, when), run_id), out)
    return bytes(out)


# ---------------------------------------------------------------------------------------------------
# values and known change points


def values_of(points: Sequence[Point]) -> list[float]:
    """Invalid runs stay in the trail as NaN: the detector skips them and indices stay aligned."""
    return [p.value if p.is_valid and math.isfinite(p.value) else math.nan for p in points]


def replicates_of(points: Sequence[Point]) -> list[Sequence[float]] | None:
    if points and all(len(p.replicates) >= 2 for p in points):
        return [p.replicates for p in points]
    return None


def known_indices(points: Sequence[Point], annotations: Sequence[Any], accepted_run_ids: Iterable[int],
                  before: Point | None = None) -> list[int]:
    """Indices that are known change points: the first point of an annotated version, the first point
    at or after an annotated time (its predecessor is earlier), and the culprits of alerts people
    accepted as real. `before` is the point preceding `points[0]` on the trail, if any, so a window of
    the trail resolves annotations as the whole trail would."""
    out: set[int] = set()
    for i, p in enumerate(points):
        prev = points[i - 1] if i > 0 else before
        for a in annotations:
            if a.agent_version is not None:
                if p.agent_version == a.agent_version and (prev is None or prev.agent_version != a.agent_version):
                    out.add(i)
            elif a.at is not None and (p.started_at or p.created_at) >= a.at \
                    and (prev is None or (prev.started_at or prev.created_at) < a.at):
                out.add(i)
    accepted = set(accepted_run_ids)
    out.update(i for i, p in enumerate(points) if p.run_id in accepted)
    # A window's first point has nothing before it to differ from: not a boundary for the detector.
    return sorted(i for i in out if i > 0)


def state_key(settings: Settings, min_abs: float, accepted_run_ids: Iterable[int],
              annotations: Iterable[Any]) -> str:
    """What stored change points depend on besides the data: detector settings, the overhead
    threshold, and the known change points. When it changes the trail is analysed from scratch."""
    body = json.dumps(["v2", repr(settings), min_abs, sorted(accepted_run_ids),
                       sorted((a.id, a.agent_version, a.at.isoformat() if a.at else None) for a in annotations)])
    return hashlib.sha256(body.encode()).hexdigest()


def cp_to_json(cp: ChangePoint, p: Point) -> dict[str, Any]:
    out: dict[str, Any] = {"run_id": p.run_id, "key": p.key.hex()}
    for name in ChangePoint.__dataclass_fields__:
        v = getattr(cp, name)
        out[name] = None if isinstance(v, float) and not math.isfinite(v) else v
    return out


def cp_from_json(d: dict[str, Any], index: int) -> ChangePoint:
    nan = lambda v: math.nan if v is None else v  # noqa: E731
    return ChangePoint(index=index, p_value=nan(d["p_value"]), magnitude_abs=nan(d["magnitude_abs"]),
                       magnitude_rel=nan(d["magnitude_rel"]), direction=d["direction"],
                       before_mean=nan(d["before_mean"]), after_mean=nan(d["after_mean"]),
                       effect_sigma=math.inf if d.get("effect_sigma") is None else d["effect_sigma"],
                       known=bool(d.get("known")))


def detect(points: Sequence[Point], settings: Settings, known: Sequence[int]) -> list[ChangePoint]:
    """Change points of the whole of `points` (the trail view when nothing is stored)."""
    return analyse(values_of(points), replicates=replicates_of(points), settings=settings,
                   known=known).change_points


# ---------------------------------------------------------------------------------------------------
# reviewing a window of a trail


@dataclass(frozen=True, slots=True)
class Tentative:
    """An open alert's change point: a boundary while the window is analysed, then checked."""

    alert_id: int
    index: int
    direction: str


@dataclass(slots=True)
class Review:
    """What a window of a trail shows, for positions inside `region` (inclusive indices).

    detected: change points the detector found there (known ones included, flagged), with stats
      judged between their neighbouring change points;
    supported: open alerts the window still shows, by alert id: the change point as found now (its
      index may have moved by up to NEARBY when points arrived between);
    unsupported: open alerts it no longer shows, by alert id: the indices of the neighbouring
      change points between which no change of that direction was found there."""

    detected: list[ChangePoint]
    supported: dict[int, ChangePoint]
    unsupported: dict[int, tuple[int, int]]


def alertable(cp: ChangePoint, min_abs: float) -> bool:
    return not cp.known and cp.direction in ("regression", "improvement") and abs(cp.magnitude_abs) >= min_abs


def review(points: Sequence[Point], settings: Settings, known: Sequence[int], tentative: Sequence[Tentative],
           region: tuple[int, int], min_abs: float = 0.0) -> Review:
    """Analyse the window with known change points and open alerts as boundaries, then check every
    open alert inside `region` on its own: between its neighbouring change points, does the detector
    find a change of the alert's direction within NEARBY of it? Alerts that fail are dropped as
    boundaries and the window is analysed again without them, until every remaining one holds.

    An open alert is a boundary while it stands, so a staircase of steps is judged step by step (a
    second step is not mistaken for the tail of a ramp); it is never a fixed point: arrival of the
    points around it re-judges it."""
    values = values_of(points)
    reps = replicates_of(points)
    known_set = {i for i in known if 0 < i < len(points)}
    lo_r, hi_r = region
    standing = [t for t in tentative if t.index not in known_set and 0 < t.index < len(points)]
    unsupported: dict[int, tuple[int, int]] = {}
    while True:
        fixed = sorted(known_set | {t.index for t in standing})
        found = analyse(values, replicates=reps, settings=settings, known=fixed).change_points
        detected = [cp for cp in found if not cp.known or cp.index in known_set]
        boundaries = sorted(known_set | {t.index for t in standing} | {cp.index for cp in detected})
        supported: dict[int, ChangePoint] = {}
        dropped: list[Tentative] = []
        for t in standing:
            if not lo_r <= t.index <= hi_r:
                continue
            lo = max((b for b in boundaries if b < t.index), default=0)
            hi = min((b for b in boundaries if b > t.index), default=len(points))
            near = []
            # The newest points may already be a next change too short to be found yet (fewer than
            # min_segment points): they would inflate the noise, so the alert also stands if the
            # change holds without them.
            for end in range(hi, max(t.index + settings.min_segment, hi - settings.min_segment + 1) - 1, -1):
                seg = analyse(values[lo:end], replicates=reps[lo:end] if reps is not None else None,
                              settings=settings).change_points
                near = [cp for cp in seg if alertable(cp, min_abs) and cp.direction == t.direction
                        and abs(lo + cp.index - t.index) <= NEARBY]
                if near or hi < len(points):
                    break
            if near:
                best = min(near, key=lambda cp: (abs(lo + cp.index - t.index), cp.p_value))
                supported[t.alert_id] = replace(best, index=lo + best.index)
            else:
                dropped.append(t)
                unsupported[t.alert_id] = (lo, hi - 1)
        if not dropped:
            in_region = [cp for cp in detected if lo_r <= cp.index <= hi_r]
            return Review(in_region, supported, unsupported)
        standing = [t for t in standing if t not in dropped]

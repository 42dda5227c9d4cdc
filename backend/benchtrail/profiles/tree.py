"""Flame graphs, differential flame graphs and the frames that add CPU, from stored profiles (pure: no DB).

Every number is CPU milliseconds per 1,000 requests: a repetition's weights times 1000 over its request
count, so profiles of different lengths and rates compare. A variant's flame graph is the mean over its
profiled repetitions. A difference (variant minus reference, or run b minus run a) is compared over the
repetitions as overheads are (`benchtrail.analysis.compare`: a t interval over the per-repetition values,
paired by position when the repetitions were interleaved and there are enough of them), so a frame whose
difference is noise is shown as such.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from benchtrail.analysis import compare
from benchtrail.analysis.ab import AbResult, Repetition
from benchtrail.profiles import frames as frame_names
from benchtrail.ingest.parsers.profiles import TRUNCATED

ROOT = "all"
MIN_SHARE = 0.002        # a flame graph leaves out nodes under 0.2% of its root (listed in `hidden_ms`)
MAX_NODES = 1500


@dataclass(frozen=True, slots=True)
class Rep:
    """One profiled repetition: weighted stacks (root first) and its request count."""

    frames: Sequence[str]
    stacks: Sequence[Sequence[int]]
    weights: Sequence[float]
    requests: int
    position: int
    agent_packages: Sequence[str] = ()

    def per_1k(self) -> float:
        return 1000.0 / self.requests


@dataclass(slots=True)
class Node:
    name: str
    parent: int | None
    depth: int
    total: list[float]                       # per repetition, CPU-ms per 1k requests
    self_: list[float]
    children: dict[str, int] = field(default_factory=dict)


def _nodes(arms: Sequence[Sequence[Rep]]) -> tuple[list[Node], list[int]]:
    """One trie over every repetition of every arm (arm a's repetitions first): each node holds its total
    and self per repetition. Returns the nodes and the repetition offset of each arm."""
    reps = [r for arm in arms for r in arm]
    offsets, at = [], 0
    for arm in arms:
        offsets.append(at)
        at += len(arm)
    n = len(reps)
    nodes = [Node(ROOT, None, 0, [0.0] * n, [0.0] * n)]
    for k, rep in enumerate(reps):
        scale = rep.per_1k()
        for stack, weight in zip(rep.stacks, rep.weights, strict=True):
            w = weight * scale
            at = 0
            nodes[0].total[k] += w
            for fid in stack:
                name = rep.frames[fid]
                child = nodes[at].children.get(name)
                if child is None:
                    child = len(nodes)
                    nodes[at].children[name] = child
                    nodes.append(Node(name, at, nodes[at].depth + 1, [0.0] * n, [0.0] * n))
                nodes[child].total[k] += w
                at = child
            nodes[at].self_[k] += w
    return nodes, offsets


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


@dataclass(frozen=True, slots=True)
class FlameNode:
    id: int
    parent: int | None
    name: str
    package: str
    agent: bool
    total: float          # CPU-ms per 1k requests, mean over repetitions (the shape drawn)
    self: float
    reference_total: float | None = None    # differential graphs: the reference's mean
    delta_total: float | None = None        # variant minus reference
    delta_self: float | None = None


@dataclass(frozen=True, slots=True)
class Flame:
    nodes: list[FlameNode]
    total: float
    hidden: float          # CPU-ms per 1k of the nodes left out (under MIN_SHARE of the root, or past MAX_NODES)
    repetitions: int
    reference_repetitions: int = 0


def _prune(nodes: list[Node], width: list[float], keep_also: list[float] | None = None) -> list[int]:
    """The node indexes drawn: breadth first, each at least MIN_SHARE of the root's width (or of the other
    arm's, for a differential graph), at most MAX_NODES."""
    root = max(width[0], keep_also[0] if keep_also else 0.0)
    floor = root * MIN_SHARE
    out, queue = [], [0]
    while queue and len(out) < MAX_NODES:
        i = queue.pop(0)
        big = width[i] >= floor or (keep_also is not None and keep_also[i] >= floor)
        if i != 0 and not big:
            continue
        out.append(i)
        queue.extend(sorted(nodes[i].children.values(), key=lambda c: -width[c]))
    return out


def flame(reps: Sequence[Rep], agent_packages: Sequence[str] = ()) -> Flame:
    """A variant's flame graph: the mean over its repetitions."""
    nodes, _ = _nodes([reps])
    total = [_mean(n.total) for n in nodes]
    keep = _prune(nodes, total)
    index = {old: new for new, old in enumerate(keep)}
    out = []
    for old in keep:
        n = nodes[old]
        pkg, agent = frame_names.group(n.name, agent_packages) if old else ("", False)
        out.append(FlameNode(index[old], index.get(n.parent) if n.parent is not None else None, n.name, pkg, agent,
                             total[old], _mean(n.self_)))
    shown_self = math.fsum(f.self for f in out)
    return Flame(out, total[0], max(0.0, total[0] - shown_self), len(reps))


def differential(reference: Sequence[Rep], variant: Sequence[Rep], agent_packages: Sequence[str] = ()) -> Flame:
    """Variant minus reference on the variant's shape: each node's width is the variant's mean, with the
    reference's mean and the difference (total and self). Code only the reference ran has no width."""
    nodes, (a, b) = _nodes([reference, variant])
    ref_total = [_mean(n.total[a:b]) for n in nodes]
    var_total = [_mean(n.total[b:]) for n in nodes]
    keep = _prune(nodes, var_total)
    index = {old: new for new, old in enumerate(keep)}
    out = []
    for old in keep:
        n = nodes[old]
        pkg, agent = frame_names.group(n.name, agent_packages) if old else ("", False)
        var_self, ref_self = _mean(n.self_[b:]), _mean(n.self_[a:b])
        out.append(FlameNode(index[old], index.get(n.parent) if n.parent is not None else None, n.name, pkg, agent,
                             var_total[old], var_self, ref_total[old], var_total[old] - ref_total[old],
                             var_self - ref_self))
    shown_self = math.fsum(f.self for f in out)
    return Flame(out, var_total[0], max(0.0, var_total[0] - shown_self), len(variant), len(reference))


# ------------------------------------------------------------------------------- frames and packages

@dataclass(frozen=True, slots=True)
class Totals:
    """Per repetition: each frame's and each package group's self and total CPU-ms per 1k requests (a
    stack counts once toward a frame or group however often it appears in it), and the whole profile's."""

    whole: list[float]
    group_attributed: dict[str, list[float]]
    frame_self: dict[str, list[float]]
    frame_total: dict[str, list[float]]
    group_self: dict[str, list[float]]
    group_total: dict[str, list[float]]
    agent_groups: set[str]


def totals(reps: Sequence[Rep], agent_packages: Sequence[str] = ()) -> Totals:
    n = len(reps)
    out = Totals([0.0] * n, {}, {}, {}, {}, {}, set())
    groups: dict[str, tuple[str, bool]] = {}

    def add(table: dict[str, list[float]], key: str, k: int, w: float) -> None:
        row = table.get(key)
        if row is None:
            row = table[key] = [0.0] * n
        row[k] += w

    for k, rep in enumerate(reps):
        scale = rep.per_1k()
        for stack, weight in zip(rep.stacks, rep.weights, strict=True):
            w = weight * scale
            out.whole[k] += w
            names = [rep.frames[i] for i in stack]
            for name in names:
                if name not in groups:
                    groups[name] = frame_names.group(name, agent_packages)
                    if groups[name][1]:
                        out.agent_groups.add(groups[name][0])
            for name in set(names):
                add(out.frame_total, name, k, w)
            for g in {groups[name][0] for name in names}:
                add(out.group_total, g, k, w)
            if names:
                add(out.frame_self, names[-1], k, w)
                add(out.group_self, groups[names[-1]][0], k, w)
                add(out.group_attributed, _blamed(names, groups), k, w)
    return out


def _blamed(names: Sequence[str], groups: dict[str, tuple[str, bool]]) -> str:
    """The one group a stack's CPU is attributed to: the innermost agent code on it (the agent answers for
    everything it calls), else the running frame's group, native and kernel code counted to the nearest caller
    that has a package. Every stack goes to exactly one group, so the groups' CPU adds up to the whole."""
    for name in reversed(names):
        group, agent = groups[name]
        if agent:
            return group
    for name in reversed(names):
        group = groups[name][0]
        if not group.startswith(("[", "(no package)")):
            return group
    if names[0].startswith("[") and names[0] != TRUNCATED:   # a thread without Java code: JIT compiler, GC
        return names[0]
    return groups[names[-1]][0]


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    group: str
    agent: bool
    self_: AbResult
    total: AbResult
    attributed: AbResult | None = None    # groups: the CPU attributed to it (`_blamed`)


def _compare(ref: Sequence[float], var: Sequence[float], ref_pos: Sequence[int], var_pos: Sequence[int]) -> AbResult:
    return compare([Repetition(stats={"mean": v}, position=p) for v, p in zip(ref, ref_pos, strict=True)],
                   [Repetition(stats={"mean": v}, position=p) for v, p in zip(var, var_pos, strict=True)],
                   direction="lower", kind="mean")


def whole_difference(reference: Sequence[Rep], variant: Sequence[Rep]) -> AbResult:
    """The profiles' added CPU-ms per 1k requests (variant minus reference) over the repetitions."""
    a, b = totals(reference), totals(variant)
    return _compare(a.whole, b.whole, [r.position for r in reference], [r.position for r in variant])


def rows(reference: Sequence[Rep], variant: Sequence[Rep], agent_packages: Sequence[str] = (), *,
         limit: int = 25) -> tuple[list[Row], list[Row]]:
    """(package groups sorted by the attributed CPU they add, frames sorted by the self CPU they add), most
    first; the frames are those adding the most self or total CPU (`limit` of each)."""
    a, b = totals(reference, agent_packages), totals(variant, agent_packages)
    pa, pb = [r.position for r in reference], [r.position for r in variant]
    zero_a, zero_b = [0.0] * len(reference), [0.0] * len(variant)

    def row(name: str, grp: str, agent: bool, self_a: dict[str, list[float]], self_b: dict[str, list[float]],
            tot_a: dict[str, list[float]], tot_b: dict[str, list[float]], attributed: bool = False) -> Row:
        return Row(name, grp, agent,
                   _compare(self_a.get(name, zero_a), self_b.get(name, zero_b), pa, pb),
                   _compare(tot_a.get(name, zero_a), tot_b.get(name, zero_b), pa, pb),
                   _compare(a.group_attributed.get(name, zero_a), b.group_attributed.get(name, zero_b), pa, pb)
                   if attributed else None)

    agent_groups = a.agent_groups | b.agent_groups
    group_names = set(a.group_total) | set(b.group_total)
    groups = [row(g, g, g in agent_groups, a.group_self, b.group_self, a.group_total, b.group_total, True)
              for g in group_names]
    # By attributed CPU: each stack's CPU counted once, to the agent code on it or else to the code running;
    # the rows add up to the whole difference. (A group's total holds every stack through it, and the
    # runtime's own packages, java.lang's Thread.run or Go's runtime, sit at the root of nearly all of them.)
    groups.sort(key=lambda r: -(r.attributed.abs_diff if r.attributed else 0.0))

    def delta(table_a: dict[str, list[float]], table_b: dict[str, list[float]], name: str) -> float:
        return _mean(table_b.get(name, zero_b)) - _mean(table_a.get(name, zero_a))

    names = set(a.frame_total) | set(b.frame_total)
    by_self = sorted(names, key=lambda f: -delta(a.frame_self, b.frame_self, f))[:limit]
    by_total = sorted(names, key=lambda f: -delta(a.frame_total, b.frame_total, f))[:limit]
    chosen = list(dict.fromkeys([*by_self, *by_total]))
    frame_rows = []
    for f in chosen:
        grp, agent = frame_names.group(f, agent_packages)
        frame_rows.append(row(f, grp, agent, a.frame_self, b.frame_self, a.frame_total, b.frame_total))
    frame_rows.sort(key=lambda r: -r.self_.abs_diff)
    return groups, frame_rows

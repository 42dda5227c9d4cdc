"""Resource sampling of a variant's target while a step runs: a background thread reads the
target's CPU seconds, RSS and (JVM) heap every interval, from a local process (psutil) or a
Prometheus text endpoint. CPU % is in % of one core (top/psutil convention: 2 busy cores = 200%).

Only measured steps are sampled, so warm-up never enters a summary.
"""

from __future__ import annotations

import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import psutil
from prometheus_client.parser import text_string_to_metric_families

from .plan import Process, Variant

MB = 1024.0 * 1024.0


class SamplingError(RuntimeError):
    pass


@dataclass(frozen=True)
class Reading:
    t: float                 # time.time()
    cpu_s: float             # cumulative CPU seconds (user + system)
    rss_bytes: float | None
    heap_bytes: float | None = None


@dataclass(frozen=True)
class SeriesPoint:
    t_ms: int                # epoch ms at the end of the interval
    cpu_pct: float | None    # over the interval that ends at t_ms
    rss_mb: float | None
    heap_mb: float | None


@dataclass
class ResourceSummary:
    variant: str
    source: str
    points: list[SeriesPoint]
    window_s: float
    cpu_s: float                     # CPU seconds used over the whole window
    cpu_pct_mean: float              # cpu_s / window, in % of one core
    rss_mb_mean: float | None
    rss_mb_max: float | None
    heap_mb_mean: float | None
    heap_mb_max: float | None
    requests: int | None = None
    cpu_s_per_1k: float | None = None    # CPU seconds per 1,000 requests
    errors: list[str] = field(default_factory=list)

    def stats(self) -> dict[str, float]:
        """Metric names of benchtrail.metrics -> values, for a cell's resource stats."""
        out = {"cpu_pct": self.cpu_pct_mean}
        for name, value in (("cpu_s_per_1k", self.cpu_s_per_1k), ("rss_mb", self.rss_mb_mean),
                            ("heap_mb", self.heap_mb_mean)):
            if value is not None:
                out[name] = value
        return out


class Source(Protocol):
    name: str

    def read(self) -> Reading: ...


def pid_listening_on(port: int) -> int:
    """The local process listening on TCP `port` (any local address)."""
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return conn.pid
    raise SamplingError(f"no local process listens on TCP port {port}")


class ProcessSource:
    """A local process (and its children, for targets started through a wrapper)."""

    name = "process"

    def __init__(self, pid: int) -> None:
        try:
            self.process = psutil.Process(pid)
        except psutil.NoSuchProcess:
            raise SamplingError(f"no process with pid {pid}") from None

    def read(self) -> Reading:
        try:
            with self.process.oneshot():
                t = self.process.cpu_times()
                rss = float(self.process.memory_info().rss)
                children = self.process.children(recursive=True)
        except psutil.NoSuchProcess:
            raise SamplingError(f"process {self.process.pid} exited") from None
        # Reaped children are in children_*; live ones are added so a wrapper's worker counts too.
        cpu = t.user + t.system + t.children_user + t.children_system
        for child in children:
            try:
                ct = child.cpu_times()
                cpu += ct.user + ct.system
            except psutil.NoSuchProcess:
                pass
        return Reading(time.time(), cpu, rss)


_HEAP_NAMES = ("jvm_memory_used_bytes", "jvm_memory_bytes_used")
# Go's client_golang runtime collector: bytes of allocated heap objects (the Go "heap").
_GO_HEAP = "go_memstats_heap_alloc_bytes"


class PrometheusSource:
    """A Prometheus text endpoint: process_cpu_seconds_total, process_resident_memory_bytes and the
    JVM heap (jvm_memory_used_bytes{area="heap"} from the OpenTelemetry/Micrometer naming, or
    jvm_memory_bytes_used{area="heap"} from the Prometheus JMX/simpleclient naming; summed when
    reported per pool)."""

    name = "prometheus"

    def __init__(self, url: str, timeout_s: float = 2.0) -> None:
        self.url = url
        self.timeout_s = timeout_s

    def read(self) -> Reading:
        try:
            with urllib.request.urlopen(self.url, timeout=self.timeout_s) as resp:  # noqa: S310 - plan URL
                text = resp.read().decode("utf-8", "replace")
        except OSError as exc:
            raise SamplingError(f"cannot scrape {self.url}: {exc}") from None
        return parse_prometheus(text)


def parse_prometheus(text: str, t: float | None = None) -> Reading:
    cpu: float | None = None
    rss: float | None = None
    heap: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "process_cpu_seconds_total":
                cpu = float(s.value)
            elif s.name == "process_resident_memory_bytes":
                rss = float(s.value)
            elif s.name in _HEAP_NAMES and s.labels.get("area") == "heap":
                heap.setdefault(s.name, 0.0)
                heap[s.name] += float(s.value)
            elif s.name == _GO_HEAP:
                heap[_GO_HEAP] = float(s.value)
    if cpu is None:
        raise SamplingError("metrics have no process_cpu_seconds_total")
    heap_bytes = next((heap[n] for n in (*_HEAP_NAMES, _GO_HEAP) if n in heap), None)
    return Reading(t if t is not None else time.time(), cpu, rss, heap_bytes)


def source_for(variant: Variant) -> Source | None:
    r = variant.resources
    if r.source == "none":
        return None
    if r.source == "prometheus":
        assert r.url is not None
        return PrometheusSource(r.url)
    pid = r.pid if r.pid is not None else pid_listening_on(r.port or variant.port)
    return ProcessSource(pid)


def pid_of_command(text: str) -> int:
    """The one local process whose command line contains `text` (the runner itself excluded). Resolved
    before a step's load tool starts, so the tool's own command line (which may name the target) is
    never a candidate."""
    own = psutil.Process().pid
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if proc.info["pid"] != own and text in cmdline:
            found.append(proc.info["pid"])
    if len(found) != 1:
        which = "no process" if not found else f"{len(found)} processes (pids {', '.join(map(str, found[:10]))})"
        raise SamplingError(f"command match '{text}': {which} on this host; exactly one must match")
    return found[0]


def process_source(process: Process) -> Source:
    """The source of one of a variant's named processes (plan `variants[].processes[]`)."""
    if process.url is not None:
        return PrometheusSource(process.url)
    if process.pid is not None:
        return ProcessSource(process.pid)
    if process.command is not None:
        return ProcessSource(pid_of_command(process.command))
    assert process.port is not None
    return ProcessSource(pid_listening_on(process.port))


class ResourceSampler:
    """Samples one source in a daemon thread from start() to stop()."""

    def __init__(self, variant: str, source: Source, interval_s: float = 1.0) -> None:
        self.variant = variant
        self.source = source
        self.interval_s = interval_s
        self.readings: list[Reading] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"sampler-{variant}", daemon=True)

    def start(self) -> ResourceSampler:
        self.readings.append(self.source.read())   # the window's origin; fails loudly if unreadable
        self._thread.start()
        return self

    def _read(self) -> None:
        try:
            self.readings.append(self.source.read())
        except SamplingError as exc:
            if len(self.errors) < 10:
                self.errors.append(str(exc))

    def _loop(self) -> None:
        next_t = time.monotonic() + self.interval_s
        while not self._stop.wait(max(0.0, next_t - time.monotonic())):
            self._read()
            next_t += self.interval_s

    def stop(self, requests: int | None = None, window: tuple[float, float] | None = None) -> ResourceSummary:
        """Stop and summarize. `window` (epoch s of the first request and the last response) trims
        the readings to the load itself: JMeter's JVM start-up must not dilute the target's CPU %."""
        self._stop.set()
        self._thread.join(timeout=self.interval_s + 5)
        self._read()   # the window's end
        readings = self.readings if window is None else trim(self.readings, *window)
        return summarize(self.variant, self.source.name, readings, requests, self.errors)


def trim(readings: Sequence[Reading], start: float, end: float) -> list[Reading]:
    """The readings covering [start, end]: the last one at or before start, every one inside, and
    the first one at or after end."""
    before = [r for r in readings if r.t <= start]
    inside = [r for r in readings if start < r.t < end]
    after = [r for r in readings if r.t >= end]
    out = before[-1:] + inside + after[:1]
    return out if len(out) >= 2 else list(readings)


def summarize(variant: str, source: str, readings: Sequence[Reading], requests: int | None,
              errors: list[str] | None = None) -> ResourceSummary:
    if len(readings) < 2:
        raise SamplingError(f"{variant}: fewer than two readings ({'; '.join(errors or [])})")
    points: list[SeriesPoint] = []
    for prev, cur in zip(readings, readings[1:], strict=False):
        dt = cur.t - prev.t
        pct = 100.0 * (cur.cpu_s - prev.cpu_s) / dt if dt > 0 else None
        points.append(SeriesPoint(int(cur.t * 1000), pct,
                                  None if cur.rss_bytes is None else cur.rss_bytes / MB,
                                  None if cur.heap_bytes is None else cur.heap_bytes / MB))
    window = readings[-1].t - readings[0].t
    cpu_s = readings[-1].cpu_s - readings[0].cpu_s
    # Memory stats include the origin reading: a short step may have only the two ends.
    rss = [r.rss_bytes / MB for r in readings if r.rss_bytes is not None]
    heap = [r.heap_bytes / MB for r in readings if r.heap_bytes is not None]
    return ResourceSummary(
        variant=variant, source=source, points=points, window_s=window, cpu_s=cpu_s,
        cpu_pct_mean=100.0 * cpu_s / window if window > 0 else 0.0,
        rss_mb_mean=sum(rss) / len(rss) if rss else None, rss_mb_max=max(rss) if rss else None,
        heap_mb_mean=sum(heap) / len(heap) if heap else None, heap_mb_max=max(heap) if heap else None,
        requests=requests,
        cpu_s_per_1k=1000.0 * cpu_s / requests if requests else None,
        errors=list(errors or []))


@contextmanager
def process_sampling(variants: Sequence[Variant], interval_s: float = 1.0
                     ) -> Iterator[dict[tuple[str, str], ResourceSampler]]:
    """Samplers for every named process of the variants, keyed (variant, process), for the `with`
    body; stopped like `sampling`'s."""
    samplers: dict[tuple[str, str], ResourceSampler] = {}
    try:
        for v in variants:
            for p in v.processes:
                try:
                    src = process_source(p)
                except SamplingError as exc:
                    raise SamplingError(f"variant '{v.name}', process '{p.name}': {exc}") from None
                samplers[(v.name, p.name)] = ResourceSampler(f"{v.name}/{p.name}", src, interval_s).start()
        yield samplers
    finally:
        for s in samplers.values():
            s._stop.set()


@contextmanager
def sampling(variants: Sequence[Variant], interval_s: float = 1.0) -> Iterator[dict[str, ResourceSampler]]:
    """Samplers for the variants that declare a resource source, running for the `with` body.
    The caller stops them (sampler.stop(requests)) to get summaries; leftovers stop on exit."""
    samplers: dict[str, ResourceSampler] = {}
    try:
        for v in variants:
            src = source_for(v)
            if src is not None:
                samplers[v.name] = ResourceSampler(v.name, src, interval_s).start()
        yield samplers
    finally:
        for s in samplers.values():
            s._stop.set()

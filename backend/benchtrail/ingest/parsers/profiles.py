"""Reading raw profiles into one form: weighted stacks (`Stacks`), frames interned, weights in CPU ms.

- `pprof`: Go's CPU profile (gzipped protobuf, google/pprof's profile.proto), decoded by the `protobuf`
  library with the message types declared below (`_pprof_types`: the fields of profile.proto this reader
  uses, by their numbers). The weight of a sample is its `cpu/nanoseconds` value.
- `benchtrail-profile`: the JSON document a runner writes from a raw profile it read with the runtime's
  own tool (JFR's `jfr print --json`, py-spy's raw output): interned frames, stacks (root first) and
  samples with their times. A sample weighs its sampling period (JFR samples a running thread every period).
- `collapsed`: collapsed stacks (async-profiler, py-spy): `frame;frame;... count` per line; a sample weighs the
  sampling period the upload names (`profile.period_ms`).
- `jfr`: a raw JDK Flight Recorder recording. Kept for download; its stacks come from the
  benchtrail-profile document the runner read from it (so the server needs no JDK). Only its magic is checked.

Every reader raises `ParseError` naming the field and why.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchtrail.ingest.model import ParseError

PROFILE_FORMATS = ("pprof", "collapsed", "jfr", "benchtrail-profile")
JFR_MAGIC = b"FLR\x00"
TRUNCATED = "[truncated stack]"
NO_STACK = "[no stack]"
MAX_FRAMES = 1_000_000
MAX_STACKS = 5_000_000


@dataclass(slots=True)
class Stacks:
    """Weighted stacks: `frames` interned, each stack root first, `weights` in CPU ms (one per stack, a
    stack seen twice once). `times_ms`, when the source gives them: per stack, the sample times (epoch ms)."""

    frames: list[str]
    stacks: list[tuple[int, ...]]
    weights: list[float]
    samples: int
    source: str
    runtime: str
    period_ms: float | None
    truncated: int = 0
    outside_window: int = 0
    span_ms: tuple[float, float] | None = None      # the profile's own time span, when it says
    _index: dict[tuple[int, ...], int] = field(default_factory=dict, repr=False)
    _ids: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def cpu_ms(self) -> float:
        return math.fsum(self.weights)

    def add(self, names: Sequence[str], weight: float) -> None:
        """One sample (or several of one stack) of `weight` CPU ms, its frames by name, root first."""
        ids = []
        for name in names:
            fid = self._ids.get(name)
            if fid is None:
                fid = self._ids[name] = len(self.frames)
                self.frames.append(name)
            ids.append(fid)
        key = tuple(ids)
        at = self._index.get(key)
        if at is None:
            self._index[key] = len(self.stacks)
            self.stacks.append(key)
            self.weights.append(weight)
        else:
            self.weights[at] += weight

    def merge(self, other: Stacks) -> None:
        for stack, weight in zip(other.stacks, other.weights, strict=True):
            self.add([other.frames[i] for i in stack], weight)
        self.samples += other.samples
        self.truncated += other.truncated
        self.outside_window += other.outside_window


def empty(source: str, runtime: str, period_ms: float | None) -> Stacks:
    return Stacks(frames=[], stacks=[], weights=[], samples=0, source=source, runtime=runtime, period_ms=period_ms)


_HIDDEN = re.compile(r"[./]0x[0-9a-f]+")        # a hidden class's address: Foo$$Lambda$123/0x0000000800c0b440
_LAMBDA = re.compile(r"\$\$Lambda\$\d+")          # its number differs from one JVM start to the next


_THREAD = re.compile(r"^\[(.*?)(?: tid=\d+)?\]$")
_THREAD_NUMBER = re.compile(r"(?:[-#_ ]?\d+)+$")


def thread_name(frame: str) -> str:
    """async-profiler's thread root `[C2 CompilerThread0 tid=4711]` as `[C2 CompilerThread]`: the kind of
    thread, the same in every run (its number and id dropped)."""
    match = _THREAD.match(frame)
    if match is None:
        return frame
    return f"[{_THREAD_NUMBER.sub('', match.group(1)) or match.group(1)}]"


def jvm_name(frame: str) -> str:
    """A JVM frame as `package.Class.method`, the same in every run: JFR and async-profiler write
    `package/Class.method`, and a lambda's or hidden class's generated number and address differ from one JVM
    start to the next (dropped, so two runs name the same code alike). Kernel (`_[k]`) and native frames stay."""
    if frame.endswith("_[k]") or frame.startswith("["):
        return frame
    return _LAMBDA.sub("$$Lambda", _HIDDEN.sub("", frame.replace("/", ".")))


# ----------------------------------------------------------------------------------------------- pprof

@lru_cache(maxsize=1)
def _pprof_types() -> dict[str, Any]:
    """Message classes for the parts of google/pprof's profile.proto read here (field numbers as there)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    f = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="benchtrail_pprof.proto", package="benchtrail.pprof",
                                               syntax="proto3")

    def message(name: str, fields: list[tuple[str, int, int, bool, str | None]]) -> None:
        m = proto.message_type.add(name=name)
        for fname, number, ftype, repeated, type_name in fields:
            label = f.LABEL_REPEATED if repeated else f.LABEL_OPTIONAL
            entry = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                entry.type_name = f".benchtrail.pprof.{type_name}"

    i64, u64, s, msg = f.TYPE_INT64, f.TYPE_UINT64, f.TYPE_STRING, f.TYPE_MESSAGE
    message("ValueType", [("type", 1, i64, False, None), ("unit", 2, i64, False, None)])
    message("Sample", [("location_id", 1, u64, True, None), ("value", 2, i64, True, None)])
    message("Line", [("function_id", 1, u64, False, None), ("line", 2, i64, False, None)])
    message("Location", [("id", 1, u64, False, None), ("mapping_id", 2, u64, False, None),
                         ("address", 3, u64, False, None), ("line", 4, msg, True, "Line")])
    message("Function", [("id", 1, u64, False, None), ("name", 2, i64, False, None),
                         ("system_name", 3, i64, False, None), ("filename", 4, i64, False, None)])
    message("Profile", [("sample_type", 1, msg, True, "ValueType"), ("sample", 2, msg, True, "Sample"),
                        ("location", 4, msg, True, "Location"), ("function", 5, msg, True, "Function"),
                        ("string_table", 6, s, True, None), ("time_nanos", 9, i64, False, None),
                        ("duration_nanos", 10, i64, False, None), ("period_type", 11, msg, False, "ValueType"),
                        ("period", 12, i64, False, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"benchtrail.pprof.{name}"))
            for name in ("Profile",)}


def read_pprof(path: Path) -> Stacks:
    """A Go CPU profile (gzipped or plain protobuf): each sample's stack (inlined calls as frames of their
    own) weighted by its cpu/nanoseconds value."""
    from google.protobuf.message import DecodeError

    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise ParseError(f"not a readable gzipped pprof profile ({exc})") from None
    profile = _pprof_types()["Profile"]()
    try:
        profile.ParseFromString(data)
    except DecodeError as exc:
        raise ParseError(f"not a pprof profile (protobuf: {exc})") from None
    strings = list(profile.string_table)

    def text(i: int, what: str) -> str:
        if not 0 <= i < len(strings):
            raise ParseError(f"{what} names string {i}, past the string table ({len(strings)} strings)",
                             field="string_table")
        return strings[i]

    types = [(text(t.type, "sample_type"), text(t.unit, "sample_type")) for t in profile.sample_type]
    column = next((i for i, (kind, unit) in enumerate(types) if kind == "cpu" and unit == "nanoseconds"), None)
    if column is None:
        raise ParseError(f"not a CPU profile: its sample types are {types or 'none'} (no cpu/nanoseconds)",
                         field="sample_type")
    functions = {fn.id: text(fn.name, "function.name") or f"0x{fn.id:x}" for fn in profile.function}
    locations: dict[int, list[str]] = {}
    for loc in profile.location:
        names = []
        for line in loc.line:
            if line.function_id not in functions:
                raise ParseError(f"location {loc.id} names function {line.function_id}, which the profile lacks",
                                 field="location.line.function_id")
            names.append(functions[line.function_id])
        # line[0] is the innermost inlined call; no line: an address without symbols
        locations[loc.id] = names or [f"0x{loc.address:x}"]
    period_ms = profile.period / 1e6 if profile.period else None
    out = empty("pprof", "go", period_ms)
    for n, sample in enumerate(profile.sample):
        if len(sample.value) != len(types):
            raise ParseError(f"sample {n} has {len(sample.value)} values for {len(types)} sample types",
                             field="sample.value")
        names: list[str] = []
        for loc_id in sample.location_id:          # leaf first
            if loc_id not in locations:
                raise ParseError(f"sample {n} names location {loc_id}, which the profile lacks",
                                 field="sample.location_id")
            names.extend(locations[loc_id])
        names.reverse()
        out.add(names, sample.value[column] / 1e6)
        out.samples += int(sample.value[0]) if types[0] == ("samples", "count") else 1
    if profile.time_nanos:
        start = profile.time_nanos / 1e6
        out.span_ms = (start, start + profile.duration_nanos / 1e6)
    return out


# --------------------------------------------------------------------------------- benchtrail-profile

def read_document(path: Path, window_ms: tuple[float, float] | None = None) -> Stacks:
    """A benchtrail-profile JSON document. `window_ms`: samples with a time outside it are left out (a
    recording runs a little before and after the load it profiles) and counted in `outside_window`."""
    try:
        doc = json.loads(Path(path).read_bytes())
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not valid JSON ({str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != "benchtrail-profile":
        raise ParseError("not a benchtrail-profile document (its \"format\" is not \"benchtrail-profile\")",
                         field="format")
    if doc.get("version") != 1:
        raise ParseError(f"version {doc.get('version')!r} is not supported (1 is)", field="version")
    frames, stacks, samples = doc.get("frames"), doc.get("stacks"), doc.get("samples")
    period = doc.get("period_ms")
    runtime = doc.get("runtime")
    if runtime not in ("jvm", "go", "python"):
        raise ParseError(f"runtime {runtime!r} is not one of jvm, go, python", field="runtime")
    if not isinstance(period, (int, float)) or isinstance(period, bool) or not 0 < period <= 10_000:
        raise ParseError(f"period_ms {period!r} is not a sampling period in ms (0 < period <= 10000)",
                         field="period_ms")
    if not isinstance(frames, list) or not all(isinstance(f, str) for f in frames) or len(frames) > MAX_FRAMES:
        raise ParseError("frames must be a list of frame names", field="frames")
    if not isinstance(stacks, list) or len(stacks) > MAX_STACKS:
        raise ParseError("stacks must be a list of stacks (lists of frame indexes)", field="stacks")
    for i, stack in enumerate(stacks):
        if not isinstance(stack, list) or not all(isinstance(f, int) and 0 <= f < len(frames) for f in stack):
            raise ParseError(f"stacks[{i}] is not a list of indexes into frames (0..{len(frames) - 1})",
                             field=f"stacks[{i}]")
    if not isinstance(samples, dict) or not isinstance(samples.get("stack"), list):
        raise ParseError("samples must hold a list \"stack\" (each sample's stack index)", field="samples.stack")
    which = samples["stack"]
    times = samples.get("t_ms")
    counts = samples.get("count")
    for name, values in (("t_ms", times), ("count", counts)):
        if values is not None and (not isinstance(values, list) or len(values) != len(which)):
            raise ParseError(f"samples.{name} must be a list as long as samples.stack ({len(which)})",
                             field=f"samples.{name}")
    truncated = {int(s) for s in doc.get("truncated") or [] if isinstance(s, int)}
    out = empty(str(doc.get("source") or "document"), runtime, float(period))
    rename = jvm_name if runtime == "jvm" else (lambda name: name)
    names_of = [rename(f) for f in frames]
    named = [[names_of[f] for f in stack] for stack in stacks]
    lo = hi = None
    for n, sid in enumerate(which):
        if not isinstance(sid, int) or not 0 <= sid < len(stacks):
            raise ParseError(f"samples.stack[{n}] is not an index into stacks (0..{len(stacks) - 1})",
                             field=f"samples.stack[{n}]")
        count = 1
        if counts is not None:
            count = counts[n]
            if not isinstance(count, int) or count < 0:
                raise ParseError(f"samples.count[{n}] is not a count", field=f"samples.count[{n}]")
        t = times[n] if times is not None else None
        if t is not None:
            if not isinstance(t, (int, float)) or isinstance(t, bool):
                raise ParseError(f"samples.t_ms[{n}] is not a time in epoch ms", field=f"samples.t_ms[{n}]")
            lo, hi = (t if lo is None else min(lo, t)), (t if hi is None else max(hi, t))
            if window_ms is not None and not window_ms[0] <= t <= window_ms[1]:
                out.outside_window += count
                continue
        names = named[sid]
        if sid in truncated:
            names = [TRUNCATED, *names]
            out.truncated += count
        out.add(names, count * float(period))
        out.samples += count
    if lo is not None and hi is not None:
        out.span_ms = (float(lo), float(hi))
    return out


# ----------------------------------------------------------------------------------------- collapsed

def read_collapsed(path: Path, runtime: str, period_ms: float, source: str = "collapsed") -> Stacks:
    """Collapsed stacks (async-profiler's `collapsed` output, py-spy's `raw`): one line per stack, its frames
    root first separated by ';', then a space and its sample count; each sample weighs `period_ms`."""
    if not 0 < period_ms <= 10_000:
        raise ParseError(f"period_ms {period_ms!r} is not a sampling period in ms", field="profile.period_ms")
    rename = jvm_name if runtime == "jvm" else (lambda name: name)
    out = empty(source, runtime, period_ms)
    with Path(path).open("rb") as f:
        for n, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise ParseError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=n) from None
            if not line.strip():
                continue
            stack, _, count = line.rpartition(" ")
            if not count.isdigit() or (not stack and not line.startswith(" ")):
                raise ParseError(f"not a collapsed stack ('frame;frame;... count'): {line[:100]!r}", line=n)
            # py-spy writes samples of a thread without a Python frame as a count alone
            frames = stack.split(";") if stack else [NO_STACK]
            if " tid=" in frames[0]:   # async-profiler's `threads`: the root names the thread
                frames[0] = thread_name(frames[0])
            out.add([rename(frame) for frame in frames], int(count) * period_ms)
            out.samples += int(count)
    return out


def check(path: Path, fmt: str, period_ms: float | None = None, runtime: str = "jvm") -> str:
    """What an upload checks of a profile file before it is accepted; returns the format."""
    if fmt == "jfr":
        with Path(path).open("rb") as f:
            if f.read(4) != JFR_MAGIC:
                raise ParseError("not a JDK Flight Recorder recording (it does not start with FLR\\0)")
    elif fmt == "pprof":
        read_pprof(path)
    elif fmt == "collapsed":
        read_collapsed(path, runtime, period_ms or 1.0)
    else:
        read_document(path)
    return fmt

"""CPU profiles of a variant's target during a measured step (plan `variants[].profile`).

- JVM: JDK Flight Recorder, started and stopped in the target with `jcmd <pid> JFR.start`/`JFR.stop` around
  the step, with a settings file that records execution samples only (every 10 ms), so the recording costs
  little more than the sampling itself. The raw recording (.jfr) is uploaded, and with it its execution
  samples as read by the JDK's own `jfr print --json` (`stacks_document`): the JDK is needed where the JVM
  runs anyway (jcmd attaches to a local JVM), so the server and its workers need none.
- Go: the target's net/http/pprof endpoint (`/debug/pprof/profile?seconds=N`), fetched in a thread for the
  step's duration (in 1 s pieces when the step's length is not known beforehand, e.g. hey -n); each piece is
  a raw pprof file (gzipped protobuf), read by the server.
- JVM with `profiler: async-profiler`: async-profiler loaded into the target with `jcmd JVMTI.agent_load`,
  sampling every thread's CPU (JIT, GC, native and kernel code too); its collapsed stacks are uploaded.
- Python: py-spy (`py-spy record --format raw`: collapsed stacks), when it is installed on the runner's host.

Every tool is launched with an argument list (no shell). Profiling covers only measured steps: a warm-up is
never profiled.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .plan import Profile, Variant
from .process import ToolError
from .sampling import SamplingError, pid_listening_on, pid_of_command

PERIOD_MS = 10            # every runtime samples each running thread every 10 ms (Go's pprof: 100 Hz)
PPROF_PIECE_S = 1         # a Go profile of unknown length is fetched in pieces of this many seconds
JCMD_TIMEOUT_S = 60.0

# Execution samples only: JFR's default and profile settings also record locks, sockets, allocation, GC
# phases and more, which a CPU profile does not need and which would add to the profiler's cost.
JFC = f"""<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="Benchtrail CPU profile" description="Execution samples every {PERIOD_MS} ms">
  <event name="jdk.ExecutionSample">
    <setting name="enabled">true</setting>
    <setting name="period">{PERIOD_MS} ms</setting>
  </event>
</configuration>
"""


class ProfileError(ToolError):
    pass


@dataclass
class ProfileFile:
    """One file of a step's profile of one variant: `format` jfr (raw recording), pprof or collapsed (raw,
    read by the server) or benchtrail-profile (stacks the runner read from a raw file: `raw` is that file)."""

    variant: str
    runtime: str
    format: str
    path: Path
    raw: Path | None = None
    agent_packages: tuple[str, ...] = ()


def tool(name: str) -> str:
    """A JDK or profiler binary: $JAVA_HOME/bin first, then PATH, then the runner's own environment (py-spy
    installed with it)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise ProfileError(f"{name} is not installed on the runner's host (needed to profile; set JAVA_HOME for "
                           f"a JDK's jcmd and jfr, or install py-spy)", tool=name)
    return found


def target_pid(variant: Variant, profile: Profile) -> int:
    try:
        if profile.pid is not None:
            return profile.pid
        if profile.command is not None:
            return pid_of_command(profile.command)
        return pid_listening_on(profile.port or variant.port)
    except SamplingError as exc:
        raise ProfileError(f"variant '{variant.name}' profile: {exc}", tool="profile") from None


def _run(argv: list[str], what: str, timeout: float = JCMD_TIMEOUT_S) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603
    except subprocess.TimeoutExpired:
        raise ProfileError(f"{what}: {argv[0]} did not answer within {timeout:.0f} s", tool="profile") from None
    out = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        raise ProfileError(f"{what}: {' '.join(argv[:3])} exited {done.returncode}: {out[-500:]}", tool="profile")
    return out


class _Jfr:
    def __init__(self, variant: Variant, profile: Profile, workdir: Path, stem: str) -> None:
        self.pid = target_pid(variant, profile)
        self.name = f"benchtrail-{stem}"
        self.out = workdir / f"{stem}.jfr"
        self.variant = variant
        self.settings = workdir / "benchtrail-cpu.jfc"
        if not self.settings.exists():
            self.settings.write_text(JFC)
        out = _run([tool("jcmd"), str(self.pid), "JFR.start", f"name={self.name}", f"settings={self.settings}"],
                   f"variant '{variant.name}': starting JDK Flight Recorder in pid {self.pid}")
        if "Started recording" not in out:
            raise ProfileError(f"variant '{variant.name}': JFR.start in pid {self.pid} said: {out[-300:]}",
                               tool="jcmd")

    def stop(self) -> list[Path]:
        _run([tool("jcmd"), str(self.pid), "JFR.stop", f"name={self.name}", f"filename={self.out}"],
             f"variant '{self.variant.name}': stopping JDK Flight Recorder in pid {self.pid}")
        if not self.out.is_file() or self.out.stat().st_size == 0:
            raise ProfileError(f"variant '{self.variant.name}': JFR wrote no recording to {self.out}", tool="jcmd")
        return [self.out]


ASYNC_PROFILER_ENV = "BENCHTRAIL_ASYNC_PROFILER"


def async_profiler_library() -> Path:
    """libasyncProfiler.so: $BENCHTRAIL_ASYNC_PROFILER, else $BENCHTRAIL_TOOLS_DIR/async-profiler/ (what
    infra/demo/build.sh unpacks from Maven Central's tools.profiler:async-profiler)."""
    from .tools import tools_dir

    path = Path(os.environ.get(ASYNC_PROFILER_ENV) or tools_dir() / "async-profiler" / "libasyncProfiler.so")
    if not path.is_file():
        raise ProfileError(f"async-profiler is not installed: {path} is missing (infra/tools/install.sh demo, or "
                           f"set {ASYNC_PROFILER_ENV})", tool="async-profiler")
    return path


class _AsyncProfiler:
    """async-profiler loaded into the target JVM as an agent (`jcmd <pid> JVMTI.agent_load`), sampling every
    thread's CPU (perf events where the kernel allows, else a CPU timer) every PERIOD_MS; stopped into its
    collapsed-stacks output (one line per stack: frames root first, then the sample count)."""

    def __init__(self, variant: Variant, profile: Profile, workdir: Path, stem: str) -> None:
        self.pid = target_pid(variant, profile)
        self.library = async_profiler_library()
        self.out = workdir / f"{stem}.collapsed.txt"
        self.variant = variant
        # jcmd reads `key=value` words itself: the agent's options go inside quotes.
        # threads: each stack's root names its thread, so a JIT compiler's or GC's own CPU (no Java frame) shows
        # as such, and so does an agent's exporter thread.
        self._command(f"start,event=cpu,interval={PERIOD_MS}ms,threads", "starting async-profiler")

    def _command(self, options: str, what: str) -> None:
        out = _run([tool("jcmd"), str(self.pid), "JVMTI.agent_load", str(self.library), f'"{options}"'],
                   f"variant '{self.variant.name}': {what} in pid {self.pid}")
        if "return code: 0" not in out:
            raise ProfileError(f"variant '{self.variant.name}': async-profiler in pid {self.pid} said: {out[-300:]} "
                               f"(its messages are in the target's output)", tool="async-profiler")

    def stop(self) -> list[Path]:
        self._command(f"stop,collapsed,file={self.out}", "stopping async-profiler")
        if not self.out.is_file():
            raise ProfileError(f"variant '{self.variant.name}': async-profiler wrote no profile to {self.out}",
                               tool="async-profiler")
        return [self.out]


class _Pprof:
    """GET <url>?seconds=N in a thread: one request of the step's length, or pieces of PPROF_PIECE_S until
    stopped when the length is not known."""

    def __init__(self, variant: Variant, profile: Profile, workdir: Path, stem: str, seconds: float | None) -> None:
        self.url = profile.url or variant.target.rstrip("/") + "/debug/pprof/profile"
        self.variant = variant
        self.workdir, self.stem = workdir, stem
        self.seconds = seconds
        self.files: list[Path] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"pprof-{variant.name}", daemon=True)
        self._thread.start()

    def _fetch(self, seconds: int, index: int) -> None:
        sep = "&" if "?" in self.url else "?"
        try:
            with urllib.request.urlopen(f"{self.url}{sep}seconds={seconds}", timeout=seconds + 30) as resp:  # noqa: S310
                data = resp.read()
        except OSError as exc:
            self.errors.append(f"{self.url}: {exc}")
            return
        if not data.startswith(b"\x1f\x8b"):
            self.errors.append(f"{self.url} answered something that is not a gzipped pprof profile: {data[:80]!r}")
            return
        path = self.workdir / f"{self.stem}-{index:03d}.pb.gz"
        path.write_bytes(data)
        self.files.append(path)

    def _loop(self) -> None:
        if self.seconds is not None:
            self._fetch(max(1, math.ceil(self.seconds)), 0)
            return
        index = 0
        while not self._stop.is_set():
            self._fetch(PPROF_PIECE_S, index)
            index += 1

    def stop(self) -> list[Path]:
        self._stop.set()
        self._thread.join(timeout=(self.seconds or PPROF_PIECE_S) + 60)
        if self.errors and not self.files:
            raise ProfileError(f"variant '{self.variant.name}': no Go profile: {self.errors[0]}", tool="pprof")
        return sorted(self.files)


class _PySpy:
    def __init__(self, variant: Variant, profile: Profile, workdir: Path, stem: str) -> None:
        self.pid = target_pid(variant, profile)
        self.out = workdir / f"{stem}.pyspy.txt"
        self.log = workdir / f"{stem}.pyspy.log"
        self.variant = variant
        # --function: frames by function (its first line), not by the line running, so that a function is one
        # frame; --nonblocking: the target is never paused to be read.
        argv = [tool("py-spy"), "record", "--pid", str(self.pid), "--rate", str(1000 // PERIOD_MS),
                "--format", "raw", "--function", "--output", str(self.out), "--nonblocking"]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603

    def stop(self) -> list[Path]:
        self.proc.send_signal(signal.SIGINT)   # py-spy writes its output on Ctrl-C
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if not self.out.is_file():
            raise ProfileError(f"variant '{self.variant.name}': py-spy wrote no profile: "
                               f"{self.log.read_text(errors='replace')[-300:]}", tool="py-spy")
        return [self.out]


class StepProfiles:
    """The profiles of one measured step: started before its load tools, stopped after them."""

    def __init__(self, variants: list[Variant], repetition: int, workdir: Path, step_index: int,
                 seconds: float | None) -> None:
        self.running: list[tuple[Variant, Profile, Any]] = []
        try:
            for v in variants:
                p = v.profile
                if p is None or not p.covers(repetition):
                    continue
                stem = f"step{step_index:03d}-{v.name}-profile".replace("/", "_")
                if p.runtime == "jvm" and p.profiler == "async-profiler":
                    self.running.append((v, p, _AsyncProfiler(v, p, workdir, stem)))
                elif p.runtime == "jvm":
                    self.running.append((v, p, _Jfr(v, p, workdir, stem)))
                elif p.runtime == "go":
                    self.running.append((v, p, _Pprof(v, p, workdir, stem, seconds)))
                else:
                    self.running.append((v, p, _PySpy(v, p, workdir, stem)))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> list[ProfileFile]:
        """Stop every profiler (all of them, even when one fails; the first failure is raised after)."""
        out: list[ProfileFile] = []
        failure: ProfileError | None = None
        for v, p, running in self.running:
            try:
                paths = running.stop()
            except ProfileError as exc:
                failure = failure or exc
                continue
            fmt = {"jvm": "collapsed" if p.profiler == "async-profiler" else "jfr", "go": "pprof",
                   "python": "collapsed"}[p.runtime]
            out += [ProfileFile(v.name, p.runtime, fmt, path, agent_packages=p.agent_packages) for path in paths]
        self.running = []
        if failure is not None:
            raise failure
        return out


# ------------------------------------------------------------------------------------ reading stacks

def jvm_frame(frame: dict[str, Any]) -> str:
    """`package/Class.method` of one frame of `jfr print --json` (the server names it `package.Class.method`)."""
    method = frame.get("method") or {}
    return f"{((method.get('type') or {}).get('name')) or '?'}.{method.get('name') or '?'}"


def _epoch_ms(text: str) -> float | None:
    """`2026-11-28T02:07:14.245175584Z` (or with an offset) as epoch ms; None when unreadable."""
    from datetime import datetime

    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:?\d\d)?$", text or "")
    if match is None:
        return None
    base, frac, zone = match.groups()
    zone = "+00:00" if zone in (None, "Z") else zone
    parsed = datetime.fromisoformat(base + zone)
    return parsed.timestamp() * 1000.0 + (float("0." + frac) * 1000.0 if frac else 0.0)


def stacks_document(events: list[dict[str, Any]], *, runtime: str, source: str,
                    period_ms: float = PERIOD_MS) -> dict[str, Any]:
    """A `benchtrail-profile` document (docs/explanation/profiles.md) from JFR execution-sample events:
    frames interned, each distinct stack once (root first), each sample its time and its stack."""
    frames: dict[str, int] = {}
    stacks: dict[tuple[int, ...], int] = {}
    truncated: set[int] = set()
    t_ms: list[float | None] = []
    stack_of: list[int] = []
    for event in events:
        values = event.get("values") or {}
        trace = values.get("stackTrace") or {}
        ids = tuple(frames.setdefault(jvm_frame(f), len(frames)) for f in reversed(trace.get("frames") or []))
        sid = stacks.setdefault(ids, len(stacks))
        if trace.get("truncated"):
            truncated.add(sid)
        t_ms.append(_epoch_ms(str(values.get("startTime") or "")))
        stack_of.append(sid)
    return {"format": "benchtrail-profile", "version": 1, "runtime": runtime, "source": source,
            "period_ms": period_ms, "frames": list(frames), "stacks": [list(s) for s in stacks],
            "truncated": sorted(truncated), "samples": {"t_ms": t_ms, "stack": stack_of}}


def read_jfr(recording: Path, out: Path) -> Path:
    """The recording's execution samples, read by the JDK's `jfr print --json`, as a benchtrail-profile
    document at `out`."""
    argv = [tool("jfr"), "print", "--json", "--events", "jdk.ExecutionSample", str(recording)]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=600, check=False)  # noqa: S603
    except subprocess.TimeoutExpired:
        raise ProfileError(f"jfr print {recording.name} took over 10 minutes", tool="jfr") from None
    if done.returncode != 0:
        raise ProfileError(f"jfr print {recording.name} exited {done.returncode}: "
                           f"{done.stderr.decode(errors='replace')[-300:]}", tool="jfr")
    events = json.loads(done.stdout)["recording"]["events"]
    out.write_text(json.dumps(stacks_document(events, runtime="jvm", source="jfr"), separators=(",", ":")))
    return out


def finish(files: list[ProfileFile]) -> list[ProfileFile]:
    """After the plan (so reading never takes CPU from a measured step): each JFR recording is read into
    its stacks. Returns every file to upload, a raw recording before the stacks read from it."""
    out: list[ProfileFile] = []
    for f in files:
        if f.format == "jfr":
            stacks = read_jfr(f.path, f.path.with_suffix(".stacks.json"))
            out += [f, ProfileFile(f.variant, f.runtime, "benchtrail-profile", stacks, raw=f.path,
                                   agent_packages=f.agent_packages)]
        else:
            out.append(f)
    return out

"""Running load-tool processes: argument lists only, each in its own process group, with a time
limit, a cancel check and a per-tick hook, and CPU accounting of the tools themselves (to tell a
saturated load generator from a slow target)."""

from __future__ import annotations

import ctypes
import ctypes.util

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil

POLL_S = 0.1
KILL_GRACE_S = 2.0


_PR_SET_PDEATHSIG = 1


def session_priority(nice: int | None = None) -> None:
    """In a child that has just started a session of its own (`start_new_session=True`, from `preexec_fn`): sets its
    nice value to `nice` (by default it keeps the one it inherited) and gives its session the same priority.

    Where the kernel schedules sessions as groups (/proc/sys/kernel/sched_autogroup_enabled = 1, the default of
    Debian's and Ubuntu's kernels), a nice value only orders the processes of one session: each session gets an equal
    share of the cores whatever its processes' nice values, so a tool started in a session of its own would lose the
    runner's priority. Measured on one core: a nice -20 busy loop in its own session got 48.5 % against a nice 0 one in
    another, 92.8 % once its session's group was at -20 too (/proc/<pid>/autogroup). Without group scheduling, or
    without the right to raise a priority, the nice value alone stays. The shell's counterpart:
    infra/demo/at-priority.sh."""
    if nice is not None:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    group_priority(os.getpid(), os.getpriority(os.PRIO_PROCESS, 0))


def group_priority(pid: int, nice: int) -> None:
    """Gives the scheduling group of the session `pid` leads the priority `nice` (`session_priority`). Nothing when
    `pid` leads no session (its group is its caller's too), is gone, or the kernel has no such groups or refuses."""
    try:
        if os.getsid(pid) != pid:
            return
        path = f"/proc/{pid}/autogroup"
        with open(path) as group:   # "/autogroup-123 nice 0"
            if group.read().split()[-1] == str(nice):
                return
        with open(path, "w") as group:
            group.write(str(nice))
    except (OSError, IndexError):
        pass


def _in_tool_process() -> None:
    """In the child, before exec: ask Linux to SIGKILL the tool if the runner process dies, so a
    killed runner never leaves a load test running on its own; and keep the runner's priority in the
    tool's own session (`session_priority`)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    session_priority()


class ToolError(RuntimeError):
    """A load tool failed, was cancelled or timed out; the message says which and why."""

    def __init__(self, message: str, *, tool: str | None = None, cancelled: bool = False,
                 timed_out: bool = False) -> None:
        super().__init__(message)
        self.tool = tool
        self.cancelled = cancelled
        self.timed_out = timed_out


@dataclass
class Launch:
    argv: list[str]
    stdout_path: Path             # the tool's stdout (hey -o csv writes its result there)
    on_line: Callable[[str], None] | None = None   # called for every stdout line as it appears
    stderr_path: Path | None = None                 # None: stderr joins stdout
    cwd: Path | None = None
    env: dict[str, str] | None = None


@dataclass
class Finished:
    argv: list[str]
    returncode: int
    stdout_path: Path
    pids: list[int]               # the leader and every descendant seen while running
    cpu_s: float                  # CPU seconds of the process tree
    wall_s: float
    max_cpu_pct: float            # peak over 1 s windows, in % of one core (psutil convention)


@dataclass
class _Running:
    launch: Launch
    popen: subprocess.Popen[bytes]
    reader: threading.Thread
    pids: set[int] = field(default_factory=set)
    cpu_by_pid: dict[int, float] = field(default_factory=dict)
    max_cpu_pct: float = 0.0
    last_cpu_total: float = 0.0
    last_cpu_t: float = 0.0


def _tee(stream: object, path: Path, on_line: Callable[[str], None] | None) -> None:
    with open(path, "wb") as out:
        for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
            out.write(raw)
            out.flush()
            if on_line is not None:
                on_line(raw.decode("utf-8", "replace").rstrip("\n"))


def _tree(pid: int) -> list[psutil.Process]:
    try:
        leader = psutil.Process(pid)
        return [leader, *leader.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _account(r: _Running, now: float) -> None:
    for p in _tree(r.popen.pid):
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        r.pids.add(p.pid)
        r.cpu_by_pid[p.pid] = t.user + t.system + t.children_user + t.children_system
    total = sum(r.cpu_by_pid.values())
    if now - r.last_cpu_t >= 1.0:
        if r.last_cpu_t > 0:
            r.max_cpu_pct = max(r.max_cpu_pct, 100.0 * (total - r.last_cpu_total) / (now - r.last_cpu_t))
        r.last_cpu_total, r.last_cpu_t = total, now


def kill_group(pgid: int, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the whole process group, then SIGKILL what is left after `grace_s`."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_together(
    launches: Sequence[Launch],
    *,
    tool: str,
    timeout_s: float,
    cancel: Callable[[], bool] | None = None,
    on_tick: Callable[[float], None] | None = None,
    on_start: Callable[[list[int]], None] | None = None,
) -> list[Finished]:
    """Start every launch at once (e.g. one load generator per variant) and wait for all of them.

    Polls every 100 ms: `cancel()` true or the time limit reached -> every process group gets
    SIGTERM, then SIGKILL after 2 s, and ToolError is raised. `on_tick(elapsed_s)` drives
    time-based progress and tails of output files. A non-zero exit is not judged here: each tool
    adapter decides success from its output, since exit codes lie (hey exits 0 on total failure).
    """
    started = time.monotonic()
    running: list[_Running] = []
    try:
        for launch in launches:
            stderr: object = subprocess.STDOUT
            if launch.stderr_path is not None:
                stderr = open(launch.stderr_path, "wb")  # noqa: SIM115 - the child owns it after fork
            try:
                popen = subprocess.Popen(
                    launch.argv, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL,
                    cwd=launch.cwd, env=launch.env, start_new_session=True, preexec_fn=_in_tool_process)
            finally:
                if launch.stderr_path is not None:
                    stderr.close()  # type: ignore[attr-defined]
            reader = threading.Thread(target=_tee, args=(popen.stdout, launch.stdout_path, launch.on_line),
                                      daemon=True)
            reader.start()
            running.append(_Running(launch=launch, popen=popen, reader=reader, pids={popen.pid}))
        if on_start is not None:
            on_start([r.popen.pid for r in running])
        reason: str | None = None
        while any(r.popen.poll() is None for r in running):
            now = time.monotonic()
            for r in running:
                if r.popen.poll() is None:
                    _account(r, now)
            if cancel is not None and cancel():
                reason = "cancelled"
                break
            if now - started > timeout_s:
                reason = f"timed out after {timeout_s:g} s"
                break
            if on_tick is not None:
                on_tick(now - started)
            time.sleep(POLL_S)
        if reason is not None:
            _stop(running)
            raise ToolError(f"{tool} {reason}", tool=tool, cancelled=reason == "cancelled",
                            timed_out=reason != "cancelled")
    except BaseException:
        _stop(running)
        raise
    wall = time.monotonic() - started
    out = []
    for r in running:
        r.reader.join(timeout=5)
        out.append(Finished(argv=r.launch.argv, returncode=r.popen.returncode,
                            stdout_path=r.launch.stdout_path, pids=sorted(r.pids),
                            cpu_s=sum(r.cpu_by_pid.values()), wall_s=wall, max_cpu_pct=r.max_cpu_pct))
    return out


def _stop(running: list[_Running]) -> None:
    threads = [threading.Thread(target=kill_group, args=(r.popen.pid,)) for r in running
               if r.popen.poll() is None]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in running:
        try:
            r.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        r.reader.join(timeout=2)

"""A load tool keeps the runner's priority in the session of its own it runs in (benchtrail_runner.process
.session_priority): where the kernel schedules sessions as groups, a nice value alone orders only the processes of
one session. Raising a nice value needs no privilege, so these run as any user."""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from benchtrail_runner.process import session_priority


def _in_a_session_group() -> bool:
    """Whether this process is scheduled in its session's group: the file exists (the kernel has such groups) and
    names one. It reads empty where group scheduling is off or the process runs in a CPU cgroup of its own (as CI's
    test runs do), and then a session's group decides nothing."""
    try:
        return Path("/proc/self/autogroup").read_text().startswith("/autogroup-")
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _in_a_session_group(),
                                reason="this process is not scheduled in a session's group (/proc/self/autogroup "
                                       "missing or empty)")


def _group(text: str) -> tuple[str, int]:
    """'/autogroup-123 nice 7' -> ('/autogroup-123', 7)."""
    name, _, nice = text.split()
    return name, int(nice)


def test_a_tool_runs_at_the_runners_priority_and_so_does_its_session(tmp_path: Path) -> None:
    # A runner at nice 7 starts a tool with run_together; the tool reports its own session's group and its nice value.
    runner = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from benchtrail_runner.process import Launch, run_together
        os.nice(7)
        out = Path({str(tmp_path / "tool.out")!r})
        run_together([Launch(["sh", "-c", "cat /proc/$$/autogroup; cut -d' ' -f19 /proc/$$/stat"], out)],
                     tool="sh", timeout_s=30)
        print(open("/proc/self/autogroup").read().strip())
    """)
    done = subprocess.run([sys.executable, "-c", runner], capture_output=True, text=True, check=True)
    runners_group = _group(done.stdout.strip())
    group_line, nice = (tmp_path / "tool.out").read_text().split("\n")[:2]
    tools_group = _group(group_line)
    assert int(nice) == 7
    assert tools_group[0] != runners_group[0], "the tool runs in a session of its own"
    assert tools_group[1] == 7, (tools_group, runners_group)


def test_a_process_that_leads_no_session_leaves_its_callers_group_alone() -> None:
    before, nice = _group(Path("/proc/self/autogroup").read_text()), os.getpriority(os.PRIO_PROCESS, 0)
    try:
        child = subprocess.run(["cut", "-d", " ", "-f19", "/proc/self/stat"],
                               preexec_fn=functools.partial(session_priority, 9), capture_output=True, text=True,
                               check=True)
        assert int(child.stdout) == 9   # the child's own nice value ...
        assert _group(Path("/proc/self/autogroup").read_text()) == before   # ... and not the group it shares with us
    finally:
        with contextlib.suppress(OSError):   # had it changed it, the group of everything this session started
            Path("/proc/self/autogroup").write_text(str(before[1]))
    assert os.getpriority(os.PRIO_PROCESS, 0) == nice

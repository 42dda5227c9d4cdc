"""benchtrail-supervise on real child processes: failed exits are restarted, a clean exit or a signal to
the process group ends it, and so does a SIGTERM to the supervisor alone (`docker stop`)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from infra.localstack import VENV_BIN, wait_until


def test_failed_exits_are_restarted_until_a_clean_exit(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    # Exits 1 on its first two starts, 0 on the third.
    child = f'n=$(cat {starts} 2>/dev/null || echo 0); echo $((n+1)) > {starts}; [ "$n" -ge 2 ]'
    out = subprocess.run([str(VENV_BIN / "benchtrail-supervise"), "sh", "-c", child], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    assert starts.read_text().strip() == "3"
    assert out.stdout.count("supervised process exited, restarting") == 2


def test_a_signal_to_the_group_stops_child_and_supervisor_without_restart(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    proc = subprocess.Popen([str(VENV_BIN / "benchtrail-supervise"), "sh", "-c", f"echo x >> {starts}; exec sleep 60"],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    wait_until(lambda: starts.exists(), 30, "the child to start")
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(30) == 128 + signal.SIGTERM  # the child's own end (by SIGTERM), passed on
    assert starts.read_text() == "x\n"
    assert "restarting" not in (proc.stdout.read() if proc.stdout else "")


def test_a_sigterm_to_the_supervisor_alone_reaches_the_child(tmp_path: Path) -> None:
    """In a container the supervisor is the first process, the one `docker stop` signals: the child must hear it."""
    starts, stopped = tmp_path / "starts", tmp_path / "stopped"
    child = f"echo x >> {starts}; trap 'echo term > {stopped}; exit 0' TERM; while :; do sleep 0.1; done"
    proc = subprocess.Popen([str(VENV_BIN / "benchtrail-supervise"), "sh", "-c", child], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    wait_until(lambda: starts.exists(), 30, "the child to start")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0   # the child's own clean exit, after its TERM handler ran
    assert stopped.read_text() == "term\n" and starts.read_text() == "x\n"
    assert "restarting" not in (proc.stdout.read() if proc.stdout else "")


def test_a_sigterm_heard_while_the_child_starts_still_reaches_it(tmp_path: Path) -> None:
    """The child's first act signals the supervisor, as close as a test can get to a SIGTERM heard while the child
    is being started, before the supervisor holds its handle (on a busy machine the child can run before Popen
    returns): it is passed on all the same. Without that, the supervisor waited for a child that never heard it
    (seen once in `make test`: the test above timed out, the supervisor still waiting, its child's trap unrun)."""
    stopped = tmp_path / "stopped"
    child = f"trap 'echo term > {stopped}; exit 0' TERM; kill -TERM $PPID; while :; do sleep 0.1; done"
    for _ in range(5):
        stopped.unlink(missing_ok=True)
        proc = subprocess.Popen([str(VENV_BIN / "benchtrail-supervise"), "sh", "-c", child], stdout=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert stopped.read_text() == "term\n"

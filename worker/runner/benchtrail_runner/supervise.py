"""Keep a Celery process alive: restart it when it exits on its own, stop it when asked.

A Celery worker can die of a broker fault (e.g. kombu's Redis transport raising while it restores
unacknowledged messages on a second connection loss); nothing is lost, because late-acked tasks go back
to the queue and the sweeper re-queues stuck runs, but only a running worker picks them up again.
`make up` has no init system, so every Celery process it starts runs under this supervisor:

    benchtrail-supervise celery -A benchtrail_worker.app worker ...

The child stays in the supervisor's process group, so a signal to the group (`make down`, Ctrl-C, systemd)
reaches both: on SIGTERM or SIGINT the supervisor waits for the child's own shutdown and exits with its
code, as it does when the child exits with 0 (a requested shutdown). A SIGTERM sent to the supervisor alone
(`docker stop` signals only a container's first process) is passed on to the child: Celery's warm shutdown
takes a second SIGTERM as the same request. SIGINT is not passed on: a second one is Celery's cold shutdown. A failed exit of the child is logged
and followed by a restart, after a back-off that doubles from 1 s up to 30 s
and starts again at 1 s once a child has stayed up for a minute.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from types import FrameType

from . import logs as applog

BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0
HEALTHY_AFTER_S = 60.0


def supervise(argv: list[str]) -> int:
    stopping: list[int] = []
    children: list[subprocess.Popen[bytes]] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)
        if signum == signal.SIGTERM and children:
            children[-1].send_signal(signal.SIGTERM)   # a no-op once the child has ended

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    backoff = BACKOFF_FIRST_S
    while True:
        started = time.monotonic()
        children[:] = [subprocess.Popen(argv)]
        if signal.SIGTERM in stopping:
            # Heard while the child was being started, before the handler could see it (the child may run before
            # Popen returns): passed on now. Heard just after, it is passed on twice: Celery takes a second SIGTERM
            # as the same request.
            children[0].send_signal(signal.SIGTERM)
        code = children[0].wait()
        if stopping or code == 0:
            return code
        if time.monotonic() - started >= HEALTHY_AFTER_S:
            backoff = BACKOFF_FIRST_S
        applog.log.warning("supervised process exited, restarting", argv=argv[:4], exit_code=code,
                           restart_in_s=backoff)
        deadline = time.monotonic() + backoff
        while not stopping and time.monotonic() < deadline:
            time.sleep(0.1)
        if stopping:
            return code
        backoff = min(backoff * 2, BACKOFF_MAX_S)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: benchtrail-supervise COMMAND [ARG...]")
    applog.configure(json=True)
    code = supervise(sys.argv[1:])
    sys.exit(128 - code if code < 0 else code)  # a child ended by signal N exits 128 + N, as in a shell


if __name__ == "__main__":
    main()

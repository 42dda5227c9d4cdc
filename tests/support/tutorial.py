"""Runs a tutorial page of the manual as a reader would: its ```bash blocks in order, in one bash session, each
block's output compared with the ```text block that follows it (doctest's ELLIPSIS: `...` stands for what differs
from run to run; whitespace runs compare equal).

Markers, an HTML comment on the line before a block (invisible in the built manual):
- `<!-- tutorial: skip (why) -->`: shown, not run (e.g. `make up`: the test starts its own stack);
- `<!-- tutorial: background -->`: started in the background (a server, a runner), stopped when the page ends.

`substitutions` rewrite what differs between the reader's machine and the test's throw-away stack (the API's URL
and port, free ports, the broker's URL) in each block, and back in its output."""

from __future__ import annotations

import doctest
import os
import re
import secrets
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"(?:<!-- tutorial: (?P<marker>skip|background)\b[^>]*-->\s*\n)?```(?P<lang>[a-z]*)[^\n]*\n(?P<body>.*?)^```[ \t]*$",
                   re.S | re.M)


@dataclass
class Block:
    line: int
    code: str
    marker: str | None = None
    expected: str | None = None


def blocks(markdown: str) -> list[Block]:
    """The page's bash blocks, each with its marker and the text block right after it (its expected output)."""
    out: list[Block] = []
    previous_end: int | None = None
    previous_lang: str | None = None
    for m in FENCE.finditer(markdown):
        line = markdown.count("\n", 0, m.start()) + 1
        if m["lang"] == "bash":
            out.append(Block(line, m["body"], m["marker"]))
        elif m["lang"] == "text" and out and previous_end is not None and not markdown[previous_end:m.start()].strip() \
                and out[-1].expected is None and previous_lang == "bash":
            out[-1].expected = m["body"]
        previous_end, previous_lang = m.end(), m["lang"]
    return out


def matches(expected: str, got: str) -> bool:
    checker = doctest.OutputChecker()
    return checker.check_output(expected.strip() + "\n", got.strip() + "\n",
                                doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


def substitute(text: str, pairs: dict[str, str]) -> str:
    for old, new in pairs.items():
        text = text.replace(old, new)
    return text


@dataclass
class Session:
    """One bash process (`set -eo pipefail`: a failing command ends it) in its own process group."""

    cwd: Path
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=self.cwd, env=self.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self._send("set -eo pipefail\n")
        self.background = 0

    def _send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def run(self, code: str, timeout: float) -> tuple[str, int | None]:
        """The block's output, and None while the session lives (else bash's exit status: the block failed)."""
        sentinel = f"__tutorial_block_done_{secrets.token_hex(8)}__"
        self._send(f"{code}\nprintf '\\n%s\\n' {sentinel}\n")
        return self._read_until(sentinel, timeout)

    def start_background(self, code: str) -> None:
        self.background += 1
        log = self.log.with_name(f"{self.log.stem}-background-{self.background}.log")
        self._send(f"( {code}\n) > {log} 2>&1 &\n")

    def _read_until(self, sentinel: str, timeout: float) -> tuple[str, int | None]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        data = b""
        deadline = time.monotonic() + timeout
        while sentinel.encode() not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                return data.decode(errors="replace") + f"\n[timed out after {timeout:.0f} s]", -1
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:   # bash exited: a command failed under `set -e`
                    return data.decode(errors="replace"), self.proc.wait()
                data += chunk
                with self.log.open("ab") as f:
                    f.write(chunk)
        text = data.decode(errors="replace")
        return text[: text.rindex(sentinel)].rstrip("\n"), None

    def close(self) -> None:
        """Ends the session and everything it started (its process group, by id), SIGKILL after 10 s."""
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)


def run_page(page: Path, session: Session, to_test: dict[str, str], timeout: float = 180) -> list[str]:
    """Runs every block of the page; the problems found (empty: the page works as written)."""
    problems: list[str] = []
    from_test = {new: old for old, new in to_test.items()}
    for block in blocks(page.read_text()):
        if block.marker == "skip":
            continue
        code = substitute(block.code, to_test)
        if block.marker == "background":
            session.start_background(code)
            continue
        got, status = session.run(code, timeout)
        shown = substitute(got, from_test)
        where = f"{page.name}:{block.line}"
        if status is not None:
            problems.append(f"{where}: the block failed (bash exited {status}); its output:\n{shown}")
            break
        if block.expected is not None and not matches(block.expected, shown):
            problems.append(f"{where}: the output differs from the page.\n--- the page says:\n{block.expected}"
                            f"--- it printed:\n{shown}")
    return problems

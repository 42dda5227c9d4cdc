"""infra/scripts/chromium.sh, the Chromium the e2e suite and `make bench-ui` start: the features it turns off join the
list Playwright passes in one --disable-features (Chromium reads only the last), and every other argument goes
through unchanged, in order. A stand-in binary prints the arguments it is given, one per line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from infra.localstack import REPO

WRAPPER = REPO / "infra" / "scripts" / "chromium.sh"
OURS = "WebUIOmniboxPopup,WebUIOmniboxAimPopup"


def _argv(tmp_path: Path, *args: str) -> list[str]:
    binary = tmp_path / "chromium"
    binary.write_text("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n")
    binary.chmod(0o755)
    done = subprocess.run([str(WRAPPER), *args], env={**os.environ, "BENCHTRAIL_CHROMIUM_BINARY": str(binary)},
                          capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_playwrights_list_and_ours_are_one_switch(tmp_path: Path) -> None:
    argv = _argv(tmp_path, "--no-sandbox", "--disable-features=PaintHolding,MediaRouter", "--remote-debugging-pipe",
                 "--user-data-dir=/tmp/a b", "about:blank")
    assert argv == ["--no-sandbox", "--remote-debugging-pipe", "--user-data-dir=/tmp/a b", "about:blank",
                    f"--disable-features=PaintHolding,MediaRouter,{OURS}"]


def test_lists_given_twice_are_joined_too(tmp_path: Path) -> None:
    argv = _argv(tmp_path, "--disable-features=A", "--headless", "--disable-features=B,C")
    assert argv == ["--headless", f"--disable-features=A,B,C,{OURS}"]


def test_without_a_list_ours_is_the_only_one(tmp_path: Path) -> None:
    assert _argv(tmp_path, "--headless") == ["--headless", f"--disable-features={OURS}"]

"""The manual's tutorials run as written (docs/tutorials/*.md): every bash block a reader types is run in one bash
session against a throw-away stack (real PostgreSQL, Redis, API, worker; the tutorial starts its own runner), and
its output is compared with the text block the page shows under it (tests/support/tutorial.py). A tutorial that
stops working fails here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infra.localstack import REPO, free_port
from tests.support.tutorial import Session, blocks, run_page

TOOLS = Path(os.environ.get("BENCHTRAIL_TOOLS_DIR", REPO / ".tools"))
TUTORIALS = REPO / "docs" / "tutorials"
# What a reader's checkout has that the tutorials use, linked into the session's own folder (what a tutorial
# writes stays there).
CHECKOUT = ("Makefile", ".venv", "infra", "examples", "backend", "worker", "docs", "pyproject.toml")


def _pages() -> list[Path]:
    return sorted(p for p in TUTORIALS.glob("*.md") if any(b.marker != "skip" for b in blocks(p.read_text())))


def test_every_tutorial_has_commands_to_run() -> None:
    pages = {p.name for p in _pages()}
    assert {"first-run-from-ci.md", "first-load-test.md", "reading-results.md", "alerts-and-ci-gate.md"} <= pages


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.stem)
def test_tutorial_runs_as_written(page: Path, infra: dict[str, str], worker, live_api: str, admin_token: str,  # type: ignore[no-untyped-def]
                                  tmp_path: Path) -> None:
    home = tmp_path / "checkout"
    home.mkdir()
    for name in CHECKOUT:
        (home / name).symlink_to(REPO / name)
    (home / ".tools").symlink_to(TOOLS)
    # A reader's shell: no colour forced, and none of a `make test` above (its make flags would make the page's
    # own `make` print "Entering directory").
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "CLICOLOR_FORCE", "PYTHONPATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update({k: v for k, v in infra.items() if not k.startswith("_")})
    env.update(BENCHTRAIL_URL=live_api, BENCHTRAIL_TOKEN=admin_token, NO_COLOR="1", TERM="dumb", HOME=str(tmp_path))
    # The reader's machine (make up: API on 8400, Redis with its password, the demo ports) → this stack's.
    to_test = {
        "http://127.0.0.1:8400": live_api,
        "redis://:$(cat .data/stack/secrets/redis-password)@127.0.0.1:56379/0": infra["BENCHTRAIL_REDIS_URL"],
        **{f"127.0.0.1:{port}": f"127.0.0.1:{free_port()}" for port in (18480, 18481)},
    }
    session = Session(home, env, REPO / "artifacts" / "logs" / f"tutorial-{page.stem}.log")
    try:
        problems = run_page(page, session, to_test)
    finally:
        session.close()
    assert problems == [], "\n\n".join(problems)

"""What each kind of server process loads at its start: the statistics libraries (scipy.stats, scipy.special and
otava, which imports scipy.stats) only where they are used. The analysis and trail modules every process imports
for their types import them in the functions that use them."""

from __future__ import annotations

from tests.support.pythons import fresh_process_output

HEAVY = ("scipy.stats", "scipy.special", "otava", "arch")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = fresh_process_output(probe).splitlines()
    return out[-1].split() if out else []


def test_an_api_process_builds_its_app_without_them():
    """They were 0.6 of the 2.2 CPU-seconds an API worker process spent starting, and 60 of its 205 MB."""
    assert _loaded_after("from benchtrail.serve import worker_app\nworker_app()") == []


def test_beat_loads_none_of_them():
    assert _loaded_after("import benchtrail_worker.beat") == []


def test_the_worker_loads_them_before_its_pool_forks():
    """Its pool's processes fork from the main process and share what it imported; imported at their first
    analysis instead, each process would pay for them again."""
    assert _loaded_after("import benchtrail_worker.app") == ["scipy.stats", "scipy.special", "otava"]


def test_the_worker_and_the_clis_admin_commands_load_no_web_framework():
    """A task takes a `Principal`; resolving one from a request (benchtrail.auth.dependencies) is the API's. FastAPI
    and Starlette cost each worker start 0.37 of its 2.45 CPU-seconds (the import-linter contract "The worker loads
    no web framework" keeps the worker's imports so; this checks what a started process holds)."""
    web = ("fastapi", "starlette", "uvicorn")
    for code in ("import benchtrail_worker.app",
                 "from benchtrail.db_boundary import unit_of_work\nfrom benchtrail.projects.service import create_token"):
        probe = f"{code}\nimport sys\nprint(' '.join(m for m in {web!r} if m in sys.modules) or '-')"
        assert fresh_process_output(probe).splitlines()[-1] == "-", code

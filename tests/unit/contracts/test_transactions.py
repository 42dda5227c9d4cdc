"""Transactions are owned by the request, the task or the command: opened only where one starts (an endpoint, the
boundary helpers in db_boundary.py, the hot reads' `auth.principal.in_request`, `benchtrail admin`), never by a
service or a repository, which take the session they are given. So the transactions of one request (an upload:
its role check, the files named, the run recorded, the clean-up) are read in its endpoint's file."""

from __future__ import annotations

import ast

from infra.localstack import REPO

BACKEND = REPO / "backend" / "benchtrail"
OPENERS = {"unit_of_work", "read_unit"}
BOUNDARIES = {"db_boundary.py", "auth/principal.py", "cli/admin.py"}


def _opened_in(path) -> list[int]:  # type: ignore[no-untyped-def]
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in OPENERS:
                lines.append(node.lineno)
    return lines


def test_only_requests_tasks_and_commands_open_transactions() -> None:
    offenders = []
    for path in BACKEND.rglob("*.py"):
        relative = path.relative_to(BACKEND).as_posix()
        if relative in BOUNDARIES or path.name.endswith("endpoints.py"):
            continue
        offenders += [f"{relative}:{line}" for line in _opened_in(path)]
    assert offenders == [], "a service opens its own transaction; let its endpoint or task open it"


def test_the_scan_sees_the_boundaries() -> None:
    """The check can fail: the endpoints do open transactions, as the scan reads them."""
    assert _opened_in(BACKEND / "uploads" / "endpoints.py")
    assert _opened_in(BACKEND / "uploads" / "results_endpoints.py")

"""Every refusal names its rule: a typed error code, listed with its meaning in the OpenAPI document."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from benchtrail.errors import CODE_MEANINGS, AppError, Conflict, ErrorCode, Forbidden, InvalidRequest, NotFound
from infra.localstack import REPO

BACKEND = REPO / "backend" / "benchtrail"


def test_every_code_has_a_meaning() -> None:
    assert set(CODE_MEANINGS) == set(ErrorCode)
    assert all(meaning.strip() for meaning in CODE_MEANINGS.values())


def _codes_named_outside_the_registry() -> set[str]:
    """ErrorCode.X references anywhere in the backend but the registry's own definitions."""
    named: set[str] = set()
    for path in BACKEND.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ErrorCode"
                    and not (path.name == "errors.py" and _in_registry(tree, node))):
                named.add(node.attr)
    return named


def _in_registry(tree: ast.Module, node: ast.Attribute) -> bool:
    meanings = next(n for n in tree.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "CODE_MEANINGS")
    return meanings.lineno <= node.lineno <= (meanings.end_lineno or meanings.lineno)


def test_every_code_is_used_by_some_rule() -> None:
    unused = {code.name for code in ErrorCode} - _codes_named_outside_the_registry()
    assert not unused, f"codes no rule raises: {sorted(unused)}"


@pytest.mark.parametrize("kind", [InvalidRequest, Conflict, Forbidden])
def test_a_kind_of_many_rules_cannot_be_raised_without_its_rule(kind: type[AppError]) -> None:
    with pytest.raises(TypeError, match="needs code="):
        kind("no rule named")


def test_the_body_carries_the_code() -> None:
    assert InvalidRequest("percentile 101 is outside 0..100", code=ErrorCode.PERCENTILE_OUT_OF_RANGE).to_dict() == {
        "error": "InvalidRequest", "code": "percentile_out_of_range", "detail": "percentile 101 is outside 0..100"}
    assert NotFound("run 'x' not found").to_dict()["code"] == "not_found"


def test_the_openapi_document_lists_every_code_with_its_meaning() -> None:
    document = json.loads((REPO / "frontend" / "src" / "api" / "openapi.json").read_text())
    code = document["components"]["schemas"]["ErrorBody"]["properties"]["code"]
    assert {c["const"]: c["description"] for c in code["oneOf"]} == {c.value: m for c, m in CODE_MEANINGS.items()}
    assert "code" in document["components"]["schemas"]["ErrorBody"]["required"]


def test_string_parameters_say_a_nul_is_refused() -> None:
    document = json.loads((REPO / "frontend" / "src" / "api" / "openapi.json").read_text())
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] not in ("path", "query"):
                    continue
                strings = _strings(parameter["schema"])
                assert all("pattern" in s or "enum" in s or "const" in s for s in strings), (method, path, parameter["name"])


def _strings(schema: dict) -> list[dict]:
    found = [schema] if schema.get("type") == "string" else []
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        found += _strings(branch)
    if isinstance(schema.get("items"), dict):
        found += _strings(schema["items"])
    return found


def test_no_error_body_is_written_by_hand() -> None:
    """The server's error bodies come from AppError.to_dict (so each has its code), never a dict literal with an
    "error" key (the CLI's own JSON output is not an answer of the server)."""
    offenders = []
    for path in BACKEND.rglob("*.py"):
        if path.is_relative_to(BACKEND / "cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "error" for k in node.keys):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == [f"{Path('backend/benchtrail/errors.py')}:{_to_dict_line()}"]


def _to_dict_line() -> int:
    tree = ast.parse((BACKEND / "errors.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "error" for k in node.keys):
            return node.lineno
    raise AssertionError("AppError.to_dict builds no body")

"""Plan documents: YAML or JSON, validated against the versioned JSON Schema in docs/plans/."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from benchtrail.errors import InvalidRequest

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "docs" / "plans" / "plan-v1.schema.json"


@lru_cache
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


def parse(text: str, *, source: str = "plan") -> dict[str, Any]:
    """YAML (a superset of JSON) to a validated plan body; errors name the field path."""
    try:
        body = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InvalidRequest(f"{source}: not valid YAML/JSON{where}: {getattr(exc, 'problem', exc)}") from None
    return validate(body, source=source)


def validate(body: Any, *, source: str = "plan") -> dict[str, Any]:
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.absolute_path))
    if errors:
        details = "; ".join(f"{'/'.join(str(p) for p in e.absolute_path) or '(top level)'}: {e.message}"
                            for e in errors[:10])
        raise InvalidRequest(f"{source}: {details}")
    variants = body.get("variants", [])
    refs = [v["name"] for v in variants if v.get("role") == "reference"]
    if len(refs) > 1:
        raise InvalidRequest(f"{source}: variants: only one variant may have role 'reference' ({', '.join(refs)})")
    return body

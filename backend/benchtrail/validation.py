"""Text that reaches PostgreSQL is checked at the edge.

PostgreSQL refuses a NUL byte in `text`/`jsonb` and cannot encode an unpaired UTF-16 surrogate
(`UntranslatableCharacter`); other C0/C1 control characters are accepted by it but are never
meaningful in a name, a label or a note and break terminals and logs. Every JSON write schema derives
from `SafeModel` (or annotates its strings with `SafeStr`), so such a value is answered with
400 `InvalidText` naming the field instead of a 500 from the database.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, field_validator
from pydantic_core import PydanticCustomError

ERROR_TYPE = "unsafe_text"
# Tab, line feed and carriage return are text; every other C0 control, DEL and C1 control is not.
_ALLOWED_CONTROLS = frozenset("\t\n\r")


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text, or None when it can."""
    for index, ch in enumerate(value):
        code = ord(ch)
        if code == 0:
            return f"contains a NUL byte at character {index}"
        if 0xD800 <= code <= 0xDFFF:
            return f"contains an unpaired UTF-16 surrogate (U+{code:04X}) at character {index}"
        if (code < 0x20 or 0x7F <= code <= 0x9F) and ch not in _ALLOWED_CONTROLS:
            return f"contains the control character U+{code:04X} at character {index}"
    return None


def check_text(value: str) -> str:
    problem = text_problem(value)
    if problem is not None:
        raise PydanticCustomError(ERROR_TYPE, "{problem}", {"problem": problem})
    return value


SafeStr = Annotated[str, AfterValidator(check_text)]


def find_unsafe(value: Any, path: tuple[str | int, ...] = ()) -> tuple[tuple[str | int, ...], str] | None:
    """The first string (or mapping key) inside `value` that cannot be stored, with its path."""
    if isinstance(value, str):
        problem = text_problem(value)
        return (path, problem) if problem else None
    if isinstance(value, BaseModel):
        return None  # a nested SafeModel checks its own fields (with their own names)
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and (problem := text_problem(key)):
                return (*path, key), f"key {problem}"
            found = find_unsafe(item, (*path, key))
            if found:
                return found
        return None
    if isinstance(value, (list, tuple, set, frozenset)):
        items: Iterable[Any] = value if not isinstance(value, (set, frozenset)) else sorted(value, key=repr)
        for index, item in enumerate(items):
            found = find_unsafe(item, (*path, index))
            if found:
                return found
    return None


def describe(path: Iterable[str | int]) -> str:
    """A dotted path; a key that is itself unstorable is shown escaped (e.g. k\\ud800)."""
    return ".".join(ascii(p)[1:-1] if isinstance(p, str) and text_problem(p) else str(p) for p in path)


# The same rule as `text_problem`, as a JSON Schema pattern: the OpenAPI document states it, so a client
# (or schemathesis) knows which strings the server stores. Lone surrogates cannot be written in UTF-8 JSON.
STORABLE_TEXT = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$"


def _declare_storable(schema: Any) -> None:
    """Add the storable-text pattern to every string (and mapping key) in one model's own schema."""
    if isinstance(schema, list):
        for item in schema:
            _declare_storable(item)
        return
    if not isinstance(schema, dict) or "$ref" in schema:
        return
    if schema.get("type") == "string" and "enum" not in schema and "format" not in schema:
        if "pattern" not in schema:
            schema["pattern"] = STORABLE_TEXT
        elif schema["pattern"] != STORABLE_TEXT:
            schema.setdefault("allOf", []).append({"pattern": STORABLE_TEXT})
    if schema.get("type") == "object" and schema.get("additionalProperties") not in (None, False, True):
        schema.setdefault("propertyNames", {"pattern": STORABLE_TEXT})
    for key in ("properties",):
        for sub in (schema.get(key) or {}).values():
            _declare_storable(sub)
    for key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
        if key in schema:
            _declare_storable(schema[key])


class SafeModel(BaseModel):
    """Base of request bodies: every string field, list item, mapping key and value is checked."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        _declare_storable(handler.resolve_ref_schema(schema))
        return schema

    @field_validator("*", mode="after")
    @classmethod
    def _safe_text(cls, value: Any) -> Any:
        found = find_unsafe(value)
        if found is not None:
            path, problem = found
            where = f"{describe(path)}: " if path else ""
            raise PydanticCustomError(ERROR_TYPE, "{where}{problem}", {"where": where, "problem": problem})
        return value


def unsafe_text_errors(errors: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The validation errors that are about unstorable text (answered 400, not 422)."""
    # pydantic's own `string_unicode`: a str field given an unpaired surrogate.
    return [e for e in errors if e.get("type") in (ERROR_TYPE, "string_unicode")]


def format_errors(errors: Iterable[dict[str, Any]], root: str = "body") -> str:
    parts = []
    for e in errors:
        loc = describe(p for p in e.get("loc", ()) if p != root) or root
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)

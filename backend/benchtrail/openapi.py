"""The OpenAPI document: the contract the TypeScript client is generated from and schemathesis tests
the server against (tests/integration/test_openapi_contract.py). `python -m benchtrail.openapi` prints it.

Every error the API answers has one body, ErrorBody: {"error": "<Kind>", "code": "<rule>", "detail": "..."}
(errors.py), including request validation (422, app.py); `code` is one of `ErrorCode`, each listed with its
meaning in the ErrorBody schema. Which statuses an operation can answer is declared in two
places:

- here, centrally, from what every operation has in common (`complete`): 401 when it reads a bearer
  token, 404 when its path names a resource, 400 and 422 when it takes input (400: a malformed body or a
  string the database cannot store, naming the field; 422: a value outside the declared constraints),
  413 when it takes a body (the size limit is checked before the body is read), 429 and 503 everywhere
  (rate limits, and a database or broker outage, both with Retry-After);
- on the route (`responses=errors(...)`): what depends on what the operation does, 403 for a role it
  requires, 409 for a state it refuses, 400 for a result file it refuses.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import FastAPI, Path
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from benchtrail.errors import CODE_MEANINGS, ErrorCode

REF = "#/components/schemas/"
INT4_MAX = 2**31 - 1
# A row id in a path: ids are PostgreSQL integers, so a larger number is refused (422), not sent to the database.
ID = Annotated[int, Path(ge=1, le=INT4_MAX, description="Row id (1..2^31-1)")]


# The rule that refused a request: one of ErrorCode, each with its meaning.
CodeField = Annotated[ErrorCode, WithJsonSchema({
    "title": "ErrorCode", "type": "string",
    "oneOf": [{"const": code.value, "description": CODE_MEANINGS[code]} for code in ErrorCode]})]


class ErrorBody(BaseModel):
    """Every error the API answers. Some kinds carry more fields (e.g. InvalidResultFile: file, line,
    field, reason; the health check: the state of each component)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={"additionalProperties": True})
    error: str = Field(description="The kind of error, e.g. NotFound, Forbidden, ValidationError, "
                                   "InvalidRequest, InvalidResultFile, ServiceUnavailable",
                       examples=["NotFound"])
    code: CodeField = Field(description="The one rule that refused the request (act on this, not on the text)",
                            examples=["not_found"])
    detail: str = Field(description="What is wrong, naming the field, file or line",
                        examples=["project 'easeagent' not found"])


class ResultFileError(ErrorBody):
    """A refused result file (error = InvalidResultFile) or a malformed request (BadRequest, HTTPError)."""

    file: str | None = Field(default=None, description="The refused file's name")
    line: int | None = Field(default=None, description="1-based line in the (decompressed) file")
    field: str | None = Field(default=None, description="The column or field that is wrong")
    reason: str | None = Field(default=None, description="Why the file is refused")


DESCRIPTIONS: dict[int, str] = {
    400: "Bad request: a malformed body, or a string the server cannot store (NUL, unpaired surrogate, "
         "control character); the detail names the field",
    401: "Missing, malformed, invalid or revoked bearer token where one is needed",
    403: "The token lacks the role this operation needs",
    404: "Not found, or private and not visible to this token",
    409: "The resource is not in a state that allows this",
    413: "The request body exceeds BENCHTRAIL_MAX_UPLOAD_MB (checked before it is read)",
    422: "A value outside the constraints declared here, or one the server refuses for a reason named "
         "in the detail",
    429: "Rate limit exceeded; retry after Retry-After seconds",
    503: "The database or the broker is unreachable, or the disk refused a file (full); retry after "
         "Retry-After seconds",
}
RESULT_FILE_400 = ("A result file is refused (error InvalidResultFile, with file, line, field and reason), the "
                   "multipart body is malformed, or a string cannot be stored (the field is named)")
RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before retrying",
                               "schema": {"type": "integer", "minimum": 0}}}


def errors(*codes: int, model: type[BaseModel] = ErrorBody, **why: str) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: each code with the error body and a description (override one with
    e.g. e409="..."). Merge several with `|`."""
    return {code: {"model": model, "description": why.get(f"e{code}", DESCRIPTIONS[code])} for code in codes}


def _error_response(code: int) -> dict[str, Any]:
    response: dict[str, Any] = {"description": DESCRIPTIONS[code],
                                "content": {"application/json": {"schema": {"$ref": f"{REF}ErrorBody"}}}}
    if code in (429, 503):
        response["headers"] = dict(RETRY_AFTER)
    return response


def _uses(route: APIRoute, dependency: Callable[..., Any]) -> bool:
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        if dep.call is dependency:
            return True
        stack.extend(dep.dependencies)
    return False


# Models sent as a JSON part of a multipart form (`json_part`): the framework does not see them, so
# `complete` adds their schemas to the document's components.
_PART_MODELS: dict[str, type[BaseModel]] = {}


def json_part(model: type[BaseModel], description: str) -> dict[str, Any]:
    """The schema of a multipart form field holding `model` as JSON (declare the part's encoding
    `application/json`); the model's schema is in the document's components."""
    _PART_MODELS[model.__name__] = model
    return {"$ref": REF + model.__name__, "description": description}


def _add_schema(components: dict[str, Any], model: type[BaseModel]) -> None:
    schema = model.model_json_schema(ref_template=REF + "{model}")
    for name, definition in schema.pop("$defs", {}).items():
        components.setdefault(name, definition)
    components.setdefault(model.__name__, schema)


# A NUL anywhere in a request's path or query is answered 400 InvalidText (edge.py; PostgreSQL cannot store it):
# every string parameter says so with this pattern (any string without a NUL).
NO_NUL = "^[^\\u0000]*$"


def _refuse_nul(schema: dict[str, Any]) -> None:
    """Add NO_NUL to every string of a parameter's schema that has no pattern of its own."""
    if schema.get("type") == "string" and "pattern" not in schema and "enum" not in schema and "const" not in schema:
        schema["pattern"] = NO_NUL
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        _refuse_nul(branch)
    if isinstance(schema.get("items"), dict):
        _refuse_nul(schema["items"])


def complete(app: FastAPI, schema: dict[str, Any]) -> dict[str, Any]:
    """Add the statuses every operation has in common, make every error response ErrorBody, and add
    the schemas of the forms' JSON parts."""
    from benchtrail.auth.dependencies import get_principal, request_token

    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault("ErrorBody", ErrorBody.model_json_schema(ref_template=REF + "{model}"))
    for model in _PART_MODELS.values():
        _add_schema(components, model)
    for context in iter_route_contexts(app.routes):  # the routes of included routers, with their prefixes
        route = context.original_route
        if not isinstance(route, APIRoute) or not context.include_in_schema:
            continue
        for method in context.methods or ():
            operation = schema["paths"][context.path_format][method.lower()]
            responses = operation["responses"]
            takes_input = bool(operation.get("parameters") or operation.get("requestBody"))
            codes = [429, 503]
            if _uses(route, get_principal) or _uses(route, request_token):
                codes.append(401)
            if "{" in context.path_format:
                codes.append(404)
            if takes_input:
                codes += [400, 422]
            if operation.get("requestBody"):
                codes.append(413)
            for parameter in operation.get("parameters", []):
                if parameter.get("in") in ("path", "query"):
                    _refuse_nul(parameter["schema"])
            for code in codes:
                responses.setdefault(str(code), _error_response(code))
            for code, response in responses.items():
                if code >= "400" and "content" not in response:
                    response["content"] = {"application/json": {"schema": {"$ref": f"{REF}ErrorBody"}}}
                if code == "422":  # the server's 422 is ErrorBody, not FastAPI's validation-error list
                    responses[code] = _error_response(422)
                if code in ("429", "503"):
                    response.setdefault("headers", dict(RETRY_AFTER))
            operation["responses"] = dict(sorted(responses.items()))
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    return schema


def install(app: FastAPI) -> None:
    """Make app.openapi() return the completed document (called by the app factory after its routers)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        return complete(app, generate())  # idempotent; FastAPI regenerates when routes change

    app.openapi = openapi  # type: ignore[method-assign]


def main() -> None:
    from benchtrail.app import create_app

    json.dump(create_app().openapi(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

"""The OpenAPI document declares the server's real error body, the statuses every operation shares and the
constraints the server enforces (the behaviour itself is checked against a real API by
tests/integration/test_openapi_contract.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtrail import metrics
from benchtrail.alerts.schemas import WEBHOOK_URL


@pytest.fixture(scope="module")
def doc() -> dict:
    from benchtrail.app import create_app

    return create_app().openapi()


def operations(doc: dict):  # type: ignore[no-untyped-def]
    for path, item in doc["paths"].items():
        for method, op in item.items():
            yield method.upper(), path, op


def test_no_validation_error_array_is_declared(doc):
    schemas = doc["components"]["schemas"]
    assert "HTTPValidationError" not in schemas and "ValidationError" not in schemas
    assert schemas["ErrorBody"]["required"] == ["error", "code", "detail"]


def test_every_error_response_is_an_error_body(doc):
    for method, path, op in operations(doc):
        for code, response in op["responses"].items():
            if int(code) >= 400:
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref.rsplit("/", 1)[1] in ("ErrorBody", "ResultFileError", "HealthDegraded"), (method, path, code)
                # An error body, maybe with more fields: `error`, `code` and `detail` always there.
                schema = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
                assert {"error", "code", "detail"} <= set(schema["required"]), (method, path, code)


def test_every_operation_declares_rate_limits_and_outages_with_retry_after(doc):
    for method, path, op in operations(doc):
        for code in ("429", "503"):
            assert "Retry-After" in op["responses"][code]["headers"], (method, path, code)


def test_statuses_follow_what_the_operation_does(doc):
    for method, path, op in operations(doc):
        codes = set(op["responses"])
        if "{" in path:
            assert "404" in codes, (method, path)
        if op.get("parameters") or op.get("requestBody"):
            assert {"400", "422"} <= codes, (method, path)
        if op.get("requestBody"):
            assert "413" in codes, (method, path)
        if path.startswith("/api/v1/"):
            assert "401" in codes, (method, path)
    ops = {(m, p): set(op["responses"]) for m, p, op in operations(doc)}
    assert {"403", "409"} <= ops[("POST", "/api/v1/projects")]
    assert {"403", "409"} <= ops[("POST", "/api/v1/runs/{slug}/claim")]
    assert {"400", "403", "413"} <= ops[("POST", "/api/v1/projects/{slug}/runs")]
    assert "403" not in ops[("GET", "/api/v1/runs/{slug}")]


def _param(doc: dict, method: str, path: str, name: str) -> dict:
    return next(p for p in doc["paths"][path][method]["parameters"] if p["name"] == name)["schema"]


def test_constraints_the_server_enforces_are_declared(doc):
    trail_metrics = sorted(m for m in metrics.CATALOG if m != "error_rate")
    for path in ("/api/v1/trails/{trail_id}", "/api/v1/trails/{trail_id}/overhead"):
        assert _param(doc, "get", path, "metric")["enum"] == trail_metrics, path
    # A/B answers also take the error rate (derived from errors and requests, so no trail follows it).
    for path in ("/api/v1/runs/{slug}/overheads", "/api/v1/compare"):
        assert _param(doc, "get", path, "metric")["enum"] == sorted(metrics.CATALOG), path
    assert doc["components"]["schemas"]["CompareSpec"]["properties"]["metric"]["enum"] == sorted(metrics.CATALOG)
    p = _param(doc, "get", "/api/v1/runs/{slug}/percentiles", "p")["items"]
    assert (p["minimum"], p["maximum"]) == (0, 100)
    label = re.compile(_param(doc, "get", "/api/v1/projects/{slug}/runs", "label")["items"]["pattern"])
    assert label.search("env:ci") and label.search("k:") and not label.search("no-colon")
    annotation = doc["components"]["schemas"]["AnnotationIn"]
    assert sorted(tuple(alt["required"]) for alt in annotation["anyOf"]) == [("agent_version",), ("at",)]
    settings = doc["components"]["schemas"]["AnalysisSettings"]["properties"]
    assert settings["metrics"]["items"]["enum"] == trail_metrics
    assert settings["per_metric"]["propertyNames"]["enum"] == trail_metrics


def test_the_metadata_part_of_an_upload_is_declared_as_the_json_the_server_reads(doc):
    """`metadata` is a JSON part of the multipart form, not a free string: its schema is the model the
    server validates it with, every file option included."""
    for path, model in (("/api/v1/projects/{slug}/runs", "UploadMetadata"),
                        ("/api/v1/runs/{slug}/results", "ResultsMetadata")):
        form = doc["paths"][path]["post"]["requestBody"]["content"]["multipart/form-data"]
        assert form["schema"]["properties"]["metadata"]["$ref"] == f"#/components/schemas/{model}"
        assert form["encoding"] == {"metadata": {"contentType": "application/json"}}
        assert doc["components"]["schemas"][model]["properties"]["files"]["items"]["$ref"].endswith("/FileIn")
    file_in = doc["components"]["schemas"]["FileIn"]
    assert file_in["additionalProperties"] is False
    assert {"variant", "format", "scenario", "load", "warmup_s", "series_only", "started_ms", "timestamp_format",
            "timestamp_zone", "profile"} == set(file_in["properties"])
    assert doc["components"]["schemas"]["ProfileFileIn"]["additionalProperties"] is False
    # A history import is declared the same way, and both answers say which format each file was read as.
    form = doc["paths"]["/api/v1/projects/{slug}/imports"]["post"]["requestBody"]["content"]["multipart/form-data"]
    assert form["schema"]["properties"]["metadata"]["$ref"] == "#/components/schemas/ImportMetadata"
    assert "format" in doc["components"]["schemas"]["ImportAccepted"]["properties"]
    assert doc["components"]["schemas"]["AcceptedFile"]["required"] == ["filename", "variant", "format", "detected"]


def test_webhook_url_pattern_takes_what_the_server_can_call(doc):
    pattern = re.compile(doc["components"]["schemas"]["WebhookIn"]["properties"]["url"]["pattern"])
    for url in ("http://127.0.0.1:8080/hook", "https://hooks.slack.com/services/T0/B0/x", "http://[::1]:18081/h",
                "http://user:secret@example.org:65535/x?y=1"):
        assert pattern.search(url), url
    for url in ("ftp://example.org/", "http://[::1/", "http://example.org:65536/", "http:///path", "mailto:x@y"):
        assert not pattern.search(url), url


@settings(max_examples=500, deadline=None)
@given(url=st.from_regex(WEBHOOK_URL, fullmatch=True))
def test_every_url_the_document_allows_is_one_the_server_can_parse(url):
    from benchtrail.alerts.webhooks import _host_port

    host, port = _host_port(url)  # raises InvalidRequest (422) for a URL it cannot call
    assert host and 0 <= port <= 65535

"""The Benchtrail JSON check (ingest/parsers/benchtrail_json.py): its one-pass check of long arrays of plain items
finds exactly the errors jsonschema's own Draft 2020-12 validator finds, on valid and broken documents alike."""

from __future__ import annotations

import json
import math

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from benchtrail.ingest.parsers.benchtrail_json import SCHEMA_PATH, _predicate, _validator

SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
PLAIN = jsonschema.Draft202012Validator(SCHEMA)

# Item values that the schema's plain types accept, refuse, or accept only by jsonschema's own rules (1.0 is an
# integer, NaN is a number not below any minimum, True is no number).
VALUES = st.one_of(st.integers(-3, 10**12), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                   st.sampled_from([1.0, -0.0, 0, -1, "7", None, [], {}, math.nan]))
POINTS = st.one_of(st.tuples(VALUES, VALUES).map(list), st.lists(VALUES, max_size=3), VALUES)


def _doc(start: list, latency: list, success: list, points: list) -> dict:
    return {"format": "benchtrail", "version": 1, "tool": "t", "variants": [{"scenarios": [{"name": "GET /", "loads": [
        {"load": {"kind": "threads", "value": 10},
         "samples": {"start_ms": start, "latency_ms": latency, "success": success, "bytes": start},
         "series": [{"metric": "cpu_pct", "points": points}]}]}]}]}


def _errors(validator: jsonschema.Draft202012Validator, doc: dict) -> list[tuple[list, str, str]]:
    return sorted(((list(e.absolute_path), e.validator, e.message) for e in validator.iter_errors(doc)), key=repr)


@settings(max_examples=300, deadline=None)
@given(start=st.lists(VALUES, max_size=12), latency=st.lists(VALUES, max_size=12), success=st.lists(VALUES, max_size=6),
       points=st.lists(POINTS, max_size=8))
def test_the_check_finds_what_jsonschema_finds(start: list, latency: list, success: list, points: list) -> None:
    doc = _doc(start, latency, success, points)
    assert _errors(_validator(), doc) == _errors(PLAIN, doc)


def test_a_valid_file_is_valid_and_a_broken_item_named() -> None:
    n = 2000
    doc = _doc(list(range(n)), [0.5] * n, [True] * n, [[i, 1.5] for i in range(n)])
    assert _errors(_validator(), doc) == [] == _errors(PLAIN, doc)
    doc["variants"][0]["scenarios"][0]["loads"][0]["samples"]["latency_ms"][1234] = -2
    base = ["variants", 0, "scenarios", 0, "loads", 0]
    assert _errors(_validator(), doc) == [([*base, "samples", "latency_ms", 1234], "minimum",
                                           "-2 is less than the minimum of 0")]


def test_the_schemas_arrays_of_samples_and_points_take_the_one_pass_check() -> None:
    """Without this the fast path could silently stop applying (a schema edit) and the equivalence above would
    still hold: every array of the samples and of a series' points is checked in one pass."""
    samples = SCHEMA["$defs"]["samples"]["properties"]
    for key, prop in samples.items():
        assert _predicate(prop["items"]) is not None, key
    assert _predicate(SCHEMA["$defs"]["series"]["properties"]["points"]["items"]) is not None

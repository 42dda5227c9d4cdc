"""Pure parts of the edge: which text is storable, and the CLI's backoff schedule."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from benchtrail_runner.client import backoff_delay
from benchtrail.uploads.schemas import UploadMetadata
from benchtrail.validation import text_problem


@pytest.mark.parametrize("value, expected", [
    ("plain", None), ("tab\tnew\nline\r", None), ("é中文🙂", None),
    ("a\x00", "NUL byte at character 1"), ("\ud800", "surrogate (U+D800) at character 0"),
    ("x\x1b", "U+001B at character 1"), ("\x7f", "U+007F"), ("\x85", "U+0085"),
])
def test_text_problem(value: str, expected: str | None) -> None:
    problem = text_problem(value)
    assert (problem is None) if expected is None else (expected in problem)


def test_metadata_names_the_nested_field() -> None:
    with pytest.raises(ValidationError) as info:
        UploadMetadata.model_validate({"files": [{"variant": "a"}, {"variant": "b", "scenario": "s\x00"}]})
    (error,) = info.value.errors()
    assert error["loc"] == ("files", 1, "scenario") and error["type"] == "unsafe_text"
    with pytest.raises(ValidationError) as info:
        UploadMetadata.model_validate({"files": [{"variant": "a"}], "environment": {"attributes": {"k": "v\x07"}}})
    (error,) = info.value.errors()
    assert error["loc"] == ("environment", "attributes") and "k: contains the control character U+0007" in error["msg"]


def test_huge_numbers_are_refused_by_the_schema() -> None:
    for env in ({"memory_mb": 10**30}, {"cpus": float("inf")}, {"memory_mb": -1}):
        with pytest.raises(ValidationError):
            UploadMetadata.model_validate({"files": [{"variant": "a"}], "environment": env})
    # A warm-up past a week: the fuzz test's 6.8e16 s was accepted once and failed its ingest on an internal error
    # (a sample's time plus the warm-up is no 64-bit millisecond).
    UploadMetadata.model_validate({"files": [{"variant": "a", "warmup_s": 7 * 86_400}]})
    with pytest.raises(ValidationError) as info:
        UploadMetadata.model_validate({"files": [{"variant": "a", "warmup_s": 6.8292e16}]})
    (error,) = info.value.errors()
    assert error["loc"] == ("files", 0, "warmup_s") and error["type"] == "less_than_equal"


def test_backoff_doubles_with_jitter_respects_retry_after_and_deadline() -> None:
    random.seed(7)
    # 1, 2, 4, 8, 16 s, then capped at 30 s; each time between half and all of it.
    expected = [(0, 0.5, 1), (1, 1, 2), (2, 2, 4), (3, 4, 8), (4, 8, 16), (5, 15, 30), (20, 15, 30)]
    for attempt, low, high in expected:
        for _ in range(50):
            d = backoff_delay(attempt, None, 1000)
            assert low <= d <= high, (attempt, d)
    assert backoff_delay(0, 5, 1000) == 5  # Retry-After is a floor
    assert backoff_delay(10, 5, 3) == 3  # never past the deadline
    assert backoff_delay(0, None, 0) == 0

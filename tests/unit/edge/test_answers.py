"""The answers an API process keeps (benchtrail/http_cache.py): readers asking for the same missing
answer at the same time share one build."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from benchtrail.http_cache import _Answer, _Answers

KEY = ("/api/v1/runs/r", "", 1, 7)


class _FirstBuildBlocks:
    """A build whose first call waits for `release` (then raises `error`, if any); later calls answer at once."""

    def __init__(self, error: Exception | None = None) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.calls: list[str] = []
        self.error = error

    def __call__(self) -> _Answer:
        self.calls.append(threading.current_thread().name)
        if len(self.calls) == 1:
            self.entered.set()
            self.release.wait(30)
            if self.error is not None:
                raise self.error
        return _Answer(b"{}", '"e"', True)


def _second_reader_waits(build: _FirstBuildBlocks, first_reader: Callable[[], None],
                         second_reader: Callable[[], None]) -> None:
    """The first reader starts building; the second asks meanwhile and is seen waiting; then the build ends."""
    first = threading.Thread(target=first_reader, name="first")
    first.start()
    assert build.entered.wait(30)
    second = threading.Thread(target=second_reader, name="second")
    second.start()
    second.join(0.5)   # built again, it would be done by now; waiting, it cannot be before the release
    assert second.is_alive() and build.calls == ["first"]
    build.release.set()
    first.join(30)
    second.join(30)


def test_readers_of_an_answer_being_built_wait_for_it_instead_of_building_it_again():
    answers, build = _Answers(), _FirstBuildBlocks()
    got: dict[str, _Answer] = {}
    _second_reader_waits(build, lambda: got.update(first=answers.get_or_build(KEY, build)),
                         lambda: got.update(second=answers.get_or_build(KEY, build)))
    assert build.calls == ["first"] and got["first"] is got["second"]
    assert answers.get_or_build(KEY, build) is got["first"] and build.calls == ["first"]   # kept


def test_a_reader_whose_builder_failed_builds_for_itself():
    answers, build = _Answers(), _FirstBuildBlocks(LookupError("run 'r' not found"))
    errors: list[Exception] = []
    got: list[_Answer] = []

    def first_reader() -> None:
        try:
            answers.get_or_build(KEY, build)
        except LookupError as exc:
            errors.append(exc)

    _second_reader_waits(build, first_reader, lambda: got.append(answers.get_or_build(KEY, build)))
    assert [str(e) for e in errors] == ["run 'r' not found"]
    assert build.calls == ["first", "second"] and got[0].body == b"{}"


def test_with_nothing_kept_every_reader_builds(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BENCHTRAIL_ANSWER_CACHE_MB", "0")
    from benchtrail.config import get_settings

    get_settings.cache_clear()
    try:
        answers = _Answers()
        calls = []
        for _ in range(3):
            answers.get_or_build(KEY, lambda: calls.append(1) or _Answer(b"{}", '"e"', True))
        assert len(calls) == 3
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()

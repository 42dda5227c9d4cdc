"""The answers an API process keeps (benchtrail/http_cache.py): readers asking for the same missing
answer at the same time share one build."""

from __future__ import annotations

import threading

import pytest

from benchtrail.http_cache import _Answer, _Answers

KEY = ("/api/v1/runs/r", "", 1, 7)


def test_readers_of_an_answer_being_built_wait_for_it_instead_of_building_it_again():
    answers = _Answers()
    entered, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def build() -> _Answer:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            entered.set()
            release.wait(30)
        return _Answer(b"{}", '"e"', True)

    got: dict[str, _Answer] = {}
    first = threading.Thread(target=lambda: got.update(first=answers.get_or_build(KEY, build)), name="first")
    first.start()
    assert entered.wait(30)
    second = threading.Thread(target=lambda: got.update(second=answers.get_or_build(KEY, build)), name="second")
    second.start()
    second.join(0.5)   # built again, it would be done by now; waiting, it cannot be before the release
    assert second.is_alive() and calls == ["first"]
    release.set()
    first.join(30)
    second.join(30)
    assert calls == ["first"] and got["first"] is got["second"]
    assert answers.get_or_build(KEY, build) is got["first"] and calls == ["first"]   # kept


def test_a_reader_whose_builder_failed_builds_for_itself():
    answers = _Answers()
    entered, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def build() -> _Answer:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            entered.set()
            release.wait(30)
            raise LookupError("run 'r' not found")
        return _Answer(b"{}", '"e"', True)

    errors: list[Exception] = []
    got: list[_Answer] = []

    def first_reader() -> None:
        try:
            answers.get_or_build(KEY, build)
        except LookupError as exc:
            errors.append(exc)

    first = threading.Thread(target=first_reader, name="first")
    first.start()
    assert entered.wait(30)
    second = threading.Thread(target=lambda: got.append(answers.get_or_build(KEY, build)), name="second")
    second.start()
    second.join(0.5)
    assert second.is_alive() and calls == ["first"]   # waiting for the first build
    release.set()
    first.join(30)
    second.join(30)
    assert [str(e) for e in errors] == ["run 'r' not found"]
    assert calls == ["first", "second"] and got[0].body == b"{}"


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

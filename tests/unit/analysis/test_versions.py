from __future__ import annotations

from datetime import datetime, timezone

from benchtrail.analysis.versions import sort_versions, trail_order_key, version_key


def test_semantic_order_with_wildcards_prereleases_and_prefixes() -> None:
    given = ["2.21.0", "v1.2.3", "2.7.x", "2.7.9", "1.2.3-rc1", "2.8.0", "1.2.3-alpha", "1.10.0", "2.7.10"]
    assert sort_versions(given) == [
        "1.2.3-alpha", "1.2.3-rc1", "v1.2.3", "1.10.0", "2.7.9", "2.7.10", "2.7.x", "2.8.0", "2.21.0",
    ]


def test_release_suffixes_equal_release_and_commits_are_not_versions() -> None:
    assert version_key("1.0.0.RELEASE") == version_key("1.0.0")
    assert version_key("1.0") == version_key("1.0.0")
    assert version_key("3.1-SNAPSHOT") < version_key("3.1")
    assert version_key("abc1234") is None
    assert sort_versions(["deadbee", "1.0", "0.9"]) == ["0.9", "1.0", "deadbee"]


def test_trail_order_falls_back_to_time() -> None:
    t1 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    t2 = datetime(2024, 2, 1, tzinfo=timezone.utc)
    points = [("b", None, t2), ("a", None, t1), ("v", "1.0.0", t2), ("w", "0.9.0", t1)]
    ordered = sorted(points, key=lambda p: trail_order_key(p[1], commit_time=p[2]))
    assert [p[0] for p in ordered] == ["w", "v", "a", "b"]

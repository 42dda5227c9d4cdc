"""Order of a trail's x-axis: agent versions in semantic-version order, else commit time or run time.

Tolerates what real reports carry: '2.7.x', 'v1.2.3-rc1', '2.21.0', '1.0.0.RELEASE', '3.1-SNAPSHOT'.
Pre-releases sort before their release (1.2.3-rc1 < 1.2.3); a wildcard component ('x') sorts after
every number at its place, so '2.7.x' follows 2.7.9 and precedes 2.8.0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

_VERSION = re.compile(r"^\s*[vV]?(?P<nums>\d+(?:\.(?:\d+|[xX*]))*)(?P<rest>.*)$")
_WILDCARD = 10**12
# Known pre-release words in their customary order; unknown words sort alphabetically among them.
_PRE_ORDER = {"snapshot": 0, "dev": 1, "alpha": 2, "a": 2, "beta": 3, "b": 3, "milestone": 4, "m": 4,
              "rc": 5, "cr": 5, "pre": 5}
_RELEASE_WORDS = {"", "release", "final", "ga"}


def version_key(version: str | None) -> tuple[Any, ...] | None:
    """Sort key of a version string, or None when it is not a version (e.g. a commit hash)."""
    if version is None:
        return None
    m = _VERSION.match(version)
    if m is None:
        return None
    nums = tuple(_WILDCARD if p in "xX*" else int(p) for p in m.group("nums").split("."))
    nums = nums + (0,) * max(0, 4 - len(nums))
    rest = m.group("rest").strip().lstrip("-_.+").lower()
    rest = rest.split("+", 1)[0]           # build metadata does not order
    if rest in _RELEASE_WORDS:
        return (nums, 1, ())
    parts = [p for p in re.split(r"[.\-_]|(?<=\D)(?=\d)|(?<=\d)(?=\D)", rest) if p]
    pre: list[tuple[int, Any]] = []
    for p in parts:
        if p.isdigit():
            pre.append((1, int(p)))
        else:
            pre.append((0, (_PRE_ORDER.get(p, 6), p)))
    return (nums, 0, tuple(pre))


def trail_order_key(version: str | None = None, commit_time: datetime | None = None,
                    run_time: datetime | None = None) -> tuple[Any, ...]:
    """Key that puts points with a version in semantic order, and points without one by commit
    time, then run time. Points with versions come first; ties are broken by time."""
    vk = version_key(version)
    t = commit_time or run_time
    tkey = (0, t.timestamp()) if t is not None else (1, 0.0)
    if vk is not None:
        return (0, vk, tkey)
    return (1, (), tkey)


def sort_versions(versions: Sequence[str]) -> list[str]:
    """Versions in semantic order; strings that are not versions go last in their given order."""
    indexed = list(enumerate(versions))
    indexed.sort(key=lambda iv: (0, version_key(iv[1]), iv[0]) if version_key(iv[1]) is not None
                 else (1, (), iv[0]))
    return [v for _, v in indexed]

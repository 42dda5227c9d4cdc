"""The allow-list of load-test targets: a plan may only point tools at hosts an admin allowed."""

from __future__ import annotations

from fnmatch import fnmatchcase
from urllib.parse import urlsplit


def host_port(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"target '{url}' must be an http(s) URL with a host")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port}"


def allowed(url: str, patterns: list[str]) -> bool:
    target = host_port(url).lower()
    return any(fnmatchcase(target, p.lower()) for p in patterns)


def disallowed_targets(urls: list[str], patterns: list[str]) -> list[str]:
    bad = []
    for url in urls:
        try:
            if not allowed(url, patterns):
                bad.append(url)
        except ValueError:
            bad.append(url)
    return bad

"""The allow-list of load-test targets: a plan may only point tools at hosts an admin allowed."""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import PurePosixPath
from typing import Any
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


LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def jmx_path_problem(path: str, folders: list[str]) -> str | None:
    """Why a plan's JMX path is refused, or None. A relative path is read from the plan's own folder
    on the runner and may not climb out of it; an absolute one must lie inside an allowed folder."""
    pure = PurePosixPath(path)
    if not pure.is_absolute():
        if ".." in pure.parts:
            return f"'{path}' climbs out of the plan's folder ('..' is not allowed)"
        return None
    resolved = os.path.normpath(path)
    for folder in folders:
        root = os.path.normpath(folder)
        if os.path.commonpath([resolved, root]) == root:
            return None
    allowed_dirs = ", ".join(folders) or "none"
    return f"'{path}' is outside the allowed JMX folders (BENCHTRAIL_JMX_DIRS: {allowed_dirs})"


def plan_problems(body: dict[str, Any], patterns: list[str], jmx_folders: list[str]) -> list[tuple[str, str]]:
    """Every URL and path of a plan body checked against the allow-lists: (field path, reason)."""
    problems: list[tuple[str, str]] = []
    listed = ",".join(patterns) or "empty"

    def check_url(field: str, url: str, what: str) -> None:
        try:
            ok = allowed(url, patterns)
        except ValueError as exc:
            problems.append((field, str(exc)))
            return
        if not ok:
            problems.append((field, f"{what} '{url}' is not in the target allow-list "
                                    f"(BENCHTRAIL_TARGET_ALLOWLIST={listed})"))

    for i, variant in enumerate(body.get("variants", [])):
        if variant.get("target"):
            check_url(f"variants[{i}].target", variant["target"], "target")
        resources = variant.get("resources") or {}
        if resources.get("url"):
            check_url(f"variants[{i}].resources.url", resources["url"], "resource URL")
        if resources.get("pid") is not None:
            host = (urlsplit(variant.get("target") or "").hostname or "").lower()
            if host not in LOOPBACK:
                problems.append((f"variants[{i}].resources.pid",
                                 "a pid names a process on the runner's own host: it is accepted only for a "
                                 f"target on that host ({', '.join(sorted(LOOPBACK))}), not '{host}'"))
        profile = variant.get("profile") or {}
        if isinstance(profile, dict) and profile.get("url"):
            check_url(f"variants[{i}].profile.url", profile["url"], "profile URL")
        if isinstance(profile, dict) and any(profile.get(k) is not None for k in ("pid", "command", "port")):
            host = (urlsplit(variant.get("target") or "").hostname or "").lower()
            if host not in LOOPBACK:
                problems.append((f"variants[{i}].profile",
                                 "a pid, command or port names a process on the runner's own host: it is accepted "
                                 f"only for a target on that host ({', '.join(sorted(LOOPBACK))}), not '{host}'"))
        for j, process in enumerate(variant.get("processes") or []):
            if not isinstance(process, dict):
                continue
            if process.get("url"):
                check_url(f"variants[{i}].processes[{j}].url", process["url"], "process metrics URL")
            if any(process.get(k) is not None for k in ("pid", "command", "port")):
                host = (urlsplit(variant.get("target") or "").hostname or "").lower()
                if host not in LOOPBACK:
                    problems.append((f"variants[{i}].processes[{j}]",
                                     "a pid, command or port names a process on the runner's own host: it is "
                                     f"accepted only for a target on that host ({', '.join(sorted(LOOPBACK))}), "
                                     f"not '{host}'"))
    for i, scenario in enumerate(body.get("scenarios", [])):
        if scenario.get("jmx"):
            reason = jmx_path_problem(scenario["jmx"], jmx_folders)
            if reason:
                problems.append((f"scenarios[{i}].jmx", reason))
    return problems

"""Structured logs, shared by every process: the implementation lives in the runner package
(`benchtrail_runner.logs`), which a load host installs without the server."""

from __future__ import annotations

from benchtrail_runner.logs import configure, log

__all__ = ["configure", "log"]

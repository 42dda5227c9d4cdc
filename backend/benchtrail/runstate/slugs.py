"""A run's permalink slug."""

from __future__ import annotations

import secrets


def new_slug() -> str:
    """A run's slug: 11 URL-safe characters (64 random bits), never with a leading '-', which the CLI
    (`benchtrail show RUN`, `exclude`, `admin reingest`) would read as an option."""
    while (slug := secrets.token_urlsafe(8)).startswith("-"):
        pass
    return slug

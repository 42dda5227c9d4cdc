"""Bearer tokens: random, shown once, stored only as SHA-256 (they carry 256 bits of entropy, so a
fast hash is the right tool; a password KDF would add nothing but latency)."""

from __future__ import annotations

import hashlib
import secrets

ROLES = ("viewer", "uploader", "admin")
ROLE_RANK = {"viewer": 1, "uploader": 2, "runner": 2, "admin": 3}
PREFIX = "bt_"


def generate() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def display_prefix(token: str) -> str:
    return token[:10]

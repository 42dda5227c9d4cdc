"""Environments are deduplicated per project by a fingerprint of their hardware/OS/runtime."""

from __future__ import annotations

import hashlib
import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.models import Environment
from benchtrail.uploads.schemas import EnvironmentIn


def fingerprint(env: EnvironmentIn) -> str:
    identity = {
        "cpus": env.cpus, "memory_mb": env.memory_mb, "instance_type": (env.instance_type or "").strip(),
        "os": (env.os or "").strip(), "runtime": (env.runtime or "").strip(),
        "attributes": dict(sorted(env.attributes.items())),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def describe(env: EnvironmentIn) -> str:
    parts = [env.instance_type,
             f"{env.cpus:g} vCPU" if env.cpus else None,
             f"{env.memory_mb / 1024:g} GB" if env.memory_mb else None, env.os, env.runtime]
    return " ".join(p for p in parts if p) or "unspecified"


def get_or_create(session: Session, project_id: int, env: EnvironmentIn | None) -> Environment:
    env = env or EnvironmentIn()
    fp = fingerprint(env)
    row = session.scalar(select(Environment).where(Environment.project_id == project_id,
                                                   Environment.fingerprint == fp))
    if row is None:
        row = Environment(project_id=project_id, fingerprint=fp, name=env.name or describe(env),
                          cpus=env.cpus, memory_mb=env.memory_mb, instance_type=env.instance_type,
                          os=env.os, runtime=env.runtime, attributes=env.attributes)
        session.add(row)
        session.flush()
    return row

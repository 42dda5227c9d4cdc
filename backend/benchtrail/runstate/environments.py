"""Environments are deduplicated per project by a fingerprint of their hardware/OS/runtime."""

from __future__ import annotations

import hashlib
import json

from pydantic import ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from benchtrail.models import Environment
from benchtrail.validation import SafeModel


class EnvironmentIn(SafeModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    cpus: float | None = Field(default=None, ge=0, le=1_000_000, allow_inf_nan=False)
    memory_mb: int | None = Field(default=None, ge=0, le=2**31 - 1)
    instance_type: str | None = None
    os: str | None = None
    runtime: str | None = None
    attributes: dict[str, str] = Field(default_factory=dict)


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
    find = select(Environment).where(Environment.project_id == project_id, Environment.fingerprint == fp)
    row = session.scalar(find)
    if row is None:
        # Uploads of a new environment at once (parallel CI jobs): each inserts it unless one already did (the
        # insert waits for that one's transaction), then reads the row that is there.
        session.execute(insert(Environment).values(
            project_id=project_id, fingerprint=fp, name=env.name or describe(env), cpus=env.cpus,
            memory_mb=env.memory_mb, instance_type=env.instance_type, os=env.os, runtime=env.runtime,
            attributes=env.attributes).on_conflict_do_nothing(index_elements=["project_id", "fingerprint"]))
        row = session.scalar(find)
    return row

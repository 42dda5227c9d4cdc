"""Live run events: every committed change of a run's status, analysis status, progress or detail is
published on the run's Redis channel, whoever made it (an upload, a runner, the ingest and analysis
workers, the sweeper, a user cancelling), and `GET /runs/{slug}/events` streams them.

One hook on every session (`after_flush`) notes the runs whose watched columns changed; the
transaction boundary (`db_boundary.unit_of_work`) runs the publish after its commit, so a
rolled-back change is never announced. A lost publish (Redis down) is recovered by the stream, which
re-reads the run when it has heard nothing for a while, and by clients polling the run."""

from __future__ import annotations

import json
from typing import Any

import redis
from sqlalchemy import event, inspect
from sqlalchemy.orm import Session

from benchtrail.config import get_settings
from benchtrail.logging import log
from benchtrail.models import Run
from benchtrail.runstate.lifecycle import settled

WATCHED = ("status", "analysis_status", "progress", "status_detail", "is_valid")


def channel(slug: str) -> str:
    return f"benchtrail:run:{slug}"


def event_payload(run: Run) -> dict[str, Any]:
    return {"slug": run.slug, "status": run.status, "analysis_status": run.analysis_status or "pending",
            "progress": run.progress or {}, "status_detail": run.status_detail, "is_valid": run.is_valid}


def is_last(payload: dict[str, Any]) -> bool:
    return settled(payload["status"], payload.get("analysis_status"))


@event.listens_for(Session, "after_flush")
def _note_changed_runs(session: Session, _context: object) -> None:
    changed = [obj for obj in (*session.new, *session.dirty) if isinstance(obj, Run)
               and any(inspect(obj).attrs[name].history.has_changes() for name in WATCHED)]
    if not changed:
        return
    pending: dict[str, str] | None = session.info.get("run_events")
    if pending is None:
        pending = session.info["run_events"] = {}
        session.info.setdefault("after_commit", []).append(lambda: _publish(session.info.pop("run_events", {})))
    for run in changed:   # the last state flushed is the one committed
        pending[run.slug] = json.dumps(event_payload(run), default=str)


def _publish(payloads: dict[str, str]) -> None:
    client = redis.Redis.from_url(get_settings().redis_url, socket_timeout=2)
    try:
        for slug, payload in payloads.items():
            client.publish(channel(slug), payload)
    except redis.RedisError as exc:
        log.warning("live run update not published", runs=sorted(payloads), error=str(exc))
    finally:
        client.close()

"""Live run events (runstate/events.py): every committed change of a run is published, whoever makes it,
a rolled-back one never; `GET /runs/{slug}/events` streams them until the run settles (ended and, when
completed, analysed), and reads the run again when it hears nothing, so a lost publish is late, not
missing."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

import httpx
import pytest
import redis
from sqlalchemy import select, text

from benchtrail.db_boundary import unit_of_work
from benchtrail.models import Project, Run
from benchtrail.runstate import events, lifecycle
from benchtrail.runstate.lifecycle import AnalysisStatus, RunStatus


def _new_run(project_slug: str) -> str:
    """A run being ingested that no worker will touch (no files, no job; its heartbeat is fresh)."""
    slug = f"ev-{uuid.uuid4().hex[:8]}"
    with unit_of_work() as session:
        project = session.scalar(select(Project).where(Project.slug == project_slug))
        assert project is not None
        session.add(Run(slug=slug, project_id=project.id, source="upload", tool="jmeter",
                        status=RunStatus.INGESTING.value, heartbeat_at=datetime.now(timezone.utc),
                        labels={}, meta={}, validity=[], criteria=[], progress={}))
    return slug


def _change(slug: str, change) -> None:  # type: ignore[no-untyped-def]
    with unit_of_work() as session:
        run = session.scalar(select(Run).where(Run.slug == slug).with_for_update())
        change(run)


@contextmanager
def _subscribed(infra: dict[str, str], slug: str) -> Iterator[redis.client.PubSub]:
    """Subscribed to the run's channel (confirmed), for the events published from now on."""
    client = redis.Redis.from_url(infra["BENCHTRAIL_REDIS_URL"])
    pubsub = client.pubsub()
    pubsub.subscribe(events.channel(slug))
    try:
        assert pubsub.get_message(timeout=5)["type"] == "subscribe"  # type: ignore[index]
        yield pubsub
    finally:
        pubsub.close()
        client.close()


def _next_event(pubsub: redis.client.PubSub) -> dict:
    message = pubsub.get_message(ignore_subscribe_messages=True, timeout=10)
    assert message is not None, "no event published within 10 s"
    return json.loads(message["data"])


def test_each_committed_change_is_published_once_and_a_rolled_back_one_never(infra, make_project) -> None:
    slug = _new_run(make_project()[0])
    with _subscribed(infra, slug) as pubsub:
        _change(slug, lambda run: lifecycle.transition(run, RunStatus.COMPLETED))
        first = _next_event(pubsub)
        assert (first["slug"], first["status"], first["analysis_status"]) == (slug, "completed", "pending")
        assert set(first) == {"slug", "status", "analysis_status", "progress", "status_detail", "is_valid"}

        # Neither a rolled-back change nor a change of what the event does not carry is announced:
        # the next event is the one committed after them.
        def done_then_fail(run: Run) -> None:
            lifecycle.analysis_transition(run, AnalysisStatus.DONE)
            raise RuntimeError("the transaction fails after its flush")

        with pytest.raises(RuntimeError):
            _change(slug, done_then_fail)
        _change(slug, lambda run: setattr(run, "labels", {"k": "v"}))
        _change(slug, lambda run: lifecycle.analysis_transition(run, AnalysisStatus.FAILED))
        assert (_next_event(pubsub)["analysis_status"]) == "failed"


def test_flush_inside_the_transaction_announces_the_last_state_only(infra, make_project) -> None:
    slug = _new_run(make_project()[0])
    with _subscribed(infra, slug) as pubsub:
        with unit_of_work() as session:
            run = session.scalar(select(Run).where(Run.slug == slug).with_for_update())
            assert run is not None
            run.progress = {"percent": 50.0}
            session.flush()
            lifecycle.transition(run, RunStatus.COMPLETED)
            run.progress = {"percent": 100.0}
        event = _next_event(pubsub)
        assert (event["status"], event["progress"]) == ("completed", {"percent": 100.0})
        _change(slug, lambda run: lifecycle.analysis_transition(run, AnalysisStatus.DONE))
        assert _next_event(pubsub)["analysis_status"] == "done"   # nothing else was sent in between


def test_stream_follows_the_run_until_analysed_and_recovers_a_change_never_published(live_api, make_project) -> None:
    slug = _new_run(make_project()[0])
    seen: list[tuple[str, str]] = []
    deadline = time.monotonic() + 30
    with httpx.Client(timeout=30) as http, http.stream("GET", f"{live_api}/api/v1/runs/{slug}/events") as stream:
        assert stream.status_code == 200
        for line in stream.iter_lines():
            assert time.monotonic() < deadline, f"the stream did not end; events: {seen}"
            if not line.startswith("data: "):
                continue
            event = json.loads(line[6:])
            seen.append((event["status"], event["analysis_status"]))
            if len(seen) == 1:
                # Published by the hook: the stream stays open, the run is not analysed yet.
                _change(slug, lambda run: lifecycle.transition(run, RunStatus.COMPLETED))
            elif len(seen) == 2:
                # Written behind the ORM's back, so never published: the stream finds it by reading again.
                with unit_of_work() as session:
                    session.execute(text("UPDATE runs SET analysis_status = 'done' WHERE slug = :s"), {"s": slug})
    # The stream ended by itself after the settled state.
    assert seen == [("ingesting", "pending"), ("completed", "pending"), ("completed", "done")]


def test_a_state_heard_again_is_not_sent_again(live_api, infra, make_project) -> None:
    """The state the stream sent, heard again on the channel (a change committed between its subscription and
    its first read, or found by a quiet spell's read before its message arrived): no second event."""
    slug = _new_run(make_project()[0])
    seen: list[tuple[str, str]] = []
    client = redis.Redis.from_url(infra["BENCHTRAIL_REDIS_URL"])
    deadline = time.monotonic() + 30
    try:
        with httpx.Client(timeout=30) as http, http.stream("GET", f"{live_api}/api/v1/runs/{slug}/events") as stream:
            for line in stream.iter_lines():
                assert time.monotonic() < deadline, f"the stream did not end; events: {seen}"
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                seen.append((event["status"], event["analysis_status"]))
                client.publish(events.channel(slug), line[6:])   # the state it sent, heard again; then a change
                if len(seen) == 1:
                    _change(slug, lambda run: lifecycle.transition(run, RunStatus.COMPLETED))
                elif len(seen) == 2:
                    _change(slug, lambda run: lifecycle.analysis_transition(run, AnalysisStatus.DONE))
    finally:
        client.close()
    assert seen == [("ingesting", "pending"), ("completed", "pending"), ("completed", "done")]

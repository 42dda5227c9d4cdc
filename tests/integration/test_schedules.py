"""Schedules: cron per plan, editable through the API, fired by beat's task; missed firings are not
replayed in a burst."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from croniter import croniter
from sqlalchemy import func, select, update

from benchtrail.db_boundary import unit_of_work
from benchtrail.models import Run, Schedule
from benchtrail_worker.tasks.schedules import fire


def _plan(name: str) -> dict:
    return {"version": 1, "name": name, "tool": "hey", "pool": "nowhere",
            "variants": [{"name": "target", "role": "reference", "target": "http://127.0.0.1:9"}],
            "scenarios": [{"name": "ok", "path": "/ok"}], "loads": [{"concurrency": 1, "requests": 10}]}


def test_schedule_fires_once_after_beat_was_down(client, make_project):
    slug, token = make_project(role="admin")
    auth = {"Authorization": f"Bearer {token}"}
    r = client.post(f"/api/v1/projects/{slug}/plans", content=json.dumps(_plan("nightly")),
                    headers={**auth, "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    r = client.post(f"/api/v1/projects/{slug}/schedules", json={"plan": "nightly", "cron": "*/5 * * * *"},
                    headers=auth)
    assert r.status_code == 201, r.text
    sched = r.json()
    expected_next = croniter("*/5 * * * *", datetime.now(timezone.utc)).get_next(datetime)
    assert abs(datetime.fromisoformat(sched["next_fire_at"]) - expected_next) < timedelta(seconds=5)

    # Beat was down for ten hours: 120 firings were missed.
    with unit_of_work() as session:
        session.execute(update(Schedule).where(Schedule.id == sched["id"])
                        .values(next_fire_at=datetime.now(timezone.utc) - timedelta(hours=10)))
    fired = fire.run()
    with unit_of_work() as session:
        runs = session.scalars(select(Run).where(Run.labels["schedule"].astext == str(sched["id"]))).all()
        row = session.get(Schedule, sched["id"])
        assert len(runs) == 1 and set(fired) >= {runs[0].slug}
        assert runs[0].source == "schedule" and runs[0].status == "queued"
        assert row.next_fire_at > datetime.now(timezone.utc)
    assert fire.run() == []  # nothing more is due

    # Edit the cron and disable: no firing while disabled.
    r = client.patch(f"/api/v1/projects/{slug}/schedules/{sched['id']}", json={"cron": "0 3 * * *", "enabled": False},
                     headers=auth)
    assert r.status_code == 200 and r.json()["cron"] == "0 3 * * *" and r.json()["enabled"] is False
    with unit_of_work() as session:
        session.execute(update(Schedule).where(Schedule.id == sched["id"])
                        .values(next_fire_at=datetime.now(timezone.utc) - timedelta(minutes=1)))
    fire.run()
    with unit_of_work() as session:
        count = session.scalar(select(func.count()).select_from(Run)
                               .where(Run.labels["schedule"].astext == str(sched["id"])))
    assert count == 1


def test_invalid_cron_is_422(client, make_project):
    slug, token = make_project(role="admin")
    auth = {"Authorization": f"Bearer {token}"}
    client.post(f"/api/v1/projects/{slug}/plans", content=json.dumps(_plan("p")),
                headers={**auth, "Content-Type": "application/json"})
    r = client.post(f"/api/v1/projects/{slug}/schedules", json={"plan": "p", "cron": "every night"}, headers=auth)
    assert r.status_code == 422 and "cron" in r.json()["detail"]
    r = client.post(f"/api/v1/projects/{slug}/schedules", json={"plan": "missing", "cron": "0 3 * * *"}, headers=auth)
    assert r.status_code == 404

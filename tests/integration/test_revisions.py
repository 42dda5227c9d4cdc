"""A project's revision (benchtrail/revisions.py) keys the answers the API keeps in memory, so it must
change with every committed write to what those answers show, whoever writes (the API, a worker, a
hand-written SQL statement), and with nothing else."""

from __future__ import annotations

import pytest
from sqlalchemy import literal, select, text

from benchtrail import revisions
from benchtrail.db import get_engine
from tests.support.api import wait_analysed
from tests.support.api import upload
from tests.support.jtl import write_jtl

# Tables whose rows no remembered read shows (tokens, webhooks and their deliveries, the global catalog,
# content-addressed blobs reached through run_files, the files uploads are still storing) and the change log.
NOT_SHOWN = {"api_tokens", "webhooks", "webhook_deliveries", "metrics", "blobs", "unrecorded_blobs",
             "project_changes", "project_revisions", "alembic_version"}


def _revision(project_id: int) -> int:
    with get_engine().connect() as conn:
        return conn.execute(select(revisions.of(literal(project_id)))).scalar_one()


def _project_id(slug: str) -> int:
    with get_engine().connect() as conn:
        return conn.execute(text("SELECT id FROM projects WHERE slug = :s"), {"s": slug}).scalar_one()


def test_every_table_a_read_shows_logs_its_writes(infra):
    with get_engine().connect() as conn:
        tables = set(conn.scalars(text("SELECT table_name FROM information_schema.tables "
                                       "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")))
        triggers = {tuple(row) for row in conn.execute(text(
            "SELECT event_object_table, trigger_name, event_manipulation FROM information_schema.triggers"))}
    assert "cells" in tables and "project_changes" in tables
    missing = [(table, event) for table in sorted(tables - NOT_SHOWN) for event in ("INSERT", "UPDATE", "DELETE")
               if (table, f"log_change_{event.lower()}", event) not in triggers]
    assert missing == []


def test_the_revision_grows_by_one_per_committed_writer_and_folding_keeps_it(client, make_project):
    slug, _ = make_project()
    other, _ = make_project()
    pid, other_id = _project_id(slug), _project_id(other)
    start, other_start = _revision(pid), _revision(other_id)
    engine = get_engine()
    first, second = engine.connect(), engine.connect()
    try:
        first.begin(), second.begin()
        first.execute(text("UPDATE projects SET description = 'one' WHERE id = :p"), {"p": pid})
        first.execute(text("INSERT INTO annotations (project_id, kind, title, agent_version, known_change) "
                           "VALUES (:p, 'other', 'a', '1.0', false)"), {"p": pid})
        # A second writer of the same project neither waits for the first nor is counted before it commits.
        second.execute(text("INSERT INTO annotations (project_id, kind, title, agent_version, known_change) "
                            "VALUES (:p, 'other', 'b', '2.0', false)"), {"p": pid})
        assert _revision(pid) == start
        second.commit()
        assert _revision(pid) == start + 1
        first.commit()   # two statements, one transaction: one step
        assert _revision(pid) == start + 2
    finally:
        first.close(), second.close()
    with engine.begin() as conn:
        conn.execute(text("UPDATE annotations SET title = 'c' WHERE project_id = :p"), {"p": pid})
    assert _revision(pid) == start + 3
    assert _revision(other_id) == other_start
    with engine.begin() as conn:
        assert conn.scalar(text("SELECT count(*) FROM project_changes WHERE project_id = :p"), {"p": pid}) >= 3
        conn.execute(revisions.FOLD)
        assert conn.scalar(text("SELECT count(*) FROM project_changes WHERE project_id = :p"), {"p": pid}) == 0
    assert (_revision(pid), _revision(other_id)) == (start + 3, other_start)


def _trail_of(client, run_slug: str) -> int:
    run = client.get(f"/api/v1/runs/{run_slug}").json()
    agent = next(v["id"] for v in run["variants"] if v["name"] == "agent")
    return next(c["trail_id"] for c in run["cells"] if c["variant_id"] == agent and c["latency_p75"])


@pytest.mark.parametrize("reader", ["run", "list", "trail", "overheads", "project"])
def test_a_remembered_read_shows_every_write_after_it(client, worker, make_project, scratch, reader):
    """Each hot read answered twice (the second from memory), then after a write by the worker (a new
    run), by the API (an annotation) and by hand in SQL (the project made private)."""
    slug, token = make_project()

    def add_run(version: str, seed: int) -> str:
        files = [("baseline", write_jtl(scratch / f"b{seed}.jtl", seed=seed, per_group=20, groups=(10,))),
                 ("agent", write_jtl(scratch / f"a{seed}.jtl", seed=50 + seed, per_group=20, groups=(10,)))]
        r = upload(client, slug, token, files, {"agent_version": version})
        assert r.status_code == 202, r.text
        wait_analysed(client, r.json()["run"])
        return r.json()["run"]

    first = add_run("1.0.0", 1)
    trail = _trail_of(client, first)
    url = {"run": f"/api/v1/runs/{first}", "list": f"/api/v1/projects/{slug}/runs",
           "trail": f"/api/v1/trails/{trail}", "overheads": f"/api/v1/runs/{first}/overheads",
           "project": f"/api/v1/projects/{slug}"}[reader]

    def read(**headers: str) -> dict:
        r = client.get(url, headers=headers)
        assert r.status_code == 200, r.text
        return r.json()

    before = read()
    assert read() == before
    add_run("1.1.0", 2)
    after_run = read()
    if reader == "list":
        assert len(after_run["items"]) == 2
    if reader == "trail":
        assert [p["agent_version"] for p in after_run["points"]] == ["1.0.0", "1.1.0"]
    if reader == "project":
        assert (before["run_count"], after_run["run_count"]) == (1, 2)
        assert after_run["latest_run_at"] > before["latest_run_at"]
        etag = client.get(url).headers["etag"]
        assert client.get(url, headers={"If-None-Match": etag}).status_code == 304
        with get_engine().begin() as conn:   # renamed by hand: read again, not from memory
            conn.execute(text("UPDATE projects SET name = 'renamed' WHERE slug = :s"), {"s": slug})
        assert read()["name"] == "renamed"

    r = client.post(f"/api/v1/projects/{slug}/annotations", headers={"Authorization": f"Bearer {token}"},
                    json={"title": "JDK 21", "kind": "jdk", "agent_version": "1.1.0"})
    assert r.status_code == 201, r.text
    if reader == "trail":
        assert [a["title"] for a in read()["annotations"]] == ["JDK 21"]

    with get_engine().begin() as conn:
        conn.execute(text("UPDATE projects SET is_public = false WHERE slug = :s"), {"s": slug})
    assert client.get(url).status_code == 404
    private = read(Authorization=f"Bearer {token}")
    assert client.get(url, headers={"Authorization": f"Bearer {token}"}).headers["cache-control"] \
        == "private, no-cache"
    assert private.keys() == before.keys()

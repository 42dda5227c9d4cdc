"""Reads at scale: keyset pagination of runs, conditional GETs of a run, trail windows."""

from __future__ import annotations

import random

import pytest

from tests.support.api import wait_analysed
from tests.support.api import upload
from tests.support.jtl import write_jtl

VERSIONS = [f"1.{minor}.0" for minor in range(12)]   # 1.10.0 sorts after 1.9.0, not after 1.1.0


@pytest.fixture()
def history(client, worker, make_project, scratch):
    slug, token = make_project()
    order = VERSIONS[:]
    random.Random(7).shuffle(order)
    runs = {}
    for i, version in enumerate(order):
        files = [("baseline", write_jtl(scratch / f"b{i}.jtl", seed=i, per_group=20, groups=(10,))),
                 ("agent", write_jtl(scratch / f"a{i}.jtl", seed=100 + i, per_group=20, groups=(10,)))]
        r = upload(client, slug, token, files, {"agent_version": version})
        assert r.status_code == 202, r.text
        runs[version] = r.json()["run"]
    for run_slug in runs.values():
        wait_analysed(client, run_slug)
    return slug, runs


def test_keyset_pages_are_the_list_newest_first(client, history):
    slug, runs = history
    full = client.get(f"/api/v1/projects/{slug}/runs", params={"per_page": 100}).json()
    assert full["next_cursor"] is None
    # Uploaded one after the other: newest first is the reverse of the upload order.
    assert [r["slug"] for r in full["items"]] == list(reversed(list(runs.values())))
    seen, cursor = [], None
    while True:
        page = client.get(f"/api/v1/projects/{slug}/runs",
                          params={"per_page": 5, **({"cursor": cursor} if cursor else {})}).json()
        assert page["total"] == len(VERSIONS)
        seen += [r["slug"] for r in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [r["slug"] for r in full["items"]]
    bad = client.get(f"/api/v1/projects/{slug}/runs", params={"cursor": "not-a-cursor"})
    assert bad.status_code == 422 and "cursor" in bad.json()["detail"]


def test_a_run_answers_304_to_its_etag(client, history, make_project):
    slug, runs = history
    run_slug = runs[VERSIONS[0]]
    first = client.get(f"/api/v1/runs/{run_slug}")
    etag = first.headers["etag"]
    assert first.status_code == 200 and first.headers["cache-control"] == "public, no-cache"
    again = client.get(f"/api/v1/runs/{run_slug}", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    other = client.get(f"/api/v1/runs/{runs[VERSIONS[1]]}", headers={"If-None-Match": etag})
    assert other.status_code == 200 and other.headers["etag"] != etag
    assert other.json()["slug"] == runs[VERSIONS[1]]
    series = client.get(f"/api/v1/runs/{run_slug}/series")
    assert client.get(f"/api/v1/runs/{run_slug}/series",
                      headers={"If-None-Match": series.headers["etag"]}).status_code == 304


def test_a_trail_is_windowed_in_version_order(client, history):
    slug, runs = history
    run = client.get(f"/api/v1/runs/{runs[VERSIONS[0]]}").json()
    agent = next(v["id"] for v in run["variants"] if v["name"] == "agent")
    trail_id = next(c["trail_id"] for c in run["cells"] if c["variant_id"] == agent and c["latency_p75"])
    whole = client.get(f"/api/v1/trails/{trail_id}", params={"metric": "latency_p75"}).json()
    assert [p["agent_version"] for p in whole["points"]] == VERSIONS
    assert (whole["total_points"], whole["window_start"], whole["earlier"]) == (12, 0, None)

    newest = client.get(f"/api/v1/trails/{trail_id}", params={"metric": "latency_p75", "limit": 5}).json()
    assert [p["agent_version"] for p in newest["points"]] == VERSIONS[7:]
    assert newest["window_start"] == 7 and newest["earlier"] == runs[VERSIONS[7]]
    before = client.get(f"/api/v1/trails/{trail_id}",
                        params={"metric": "latency_p75", "limit": 5, "before": newest["earlier"]}).json()
    assert [p["agent_version"] for p in before["points"]] == VERSIONS[2:7]
    # 12 points, the 5 before the newest 5: points 2..6, two earlier ones.
    assert (before["total_points"], before["window_start"], before["earlier"]) == (12, 2, runs[VERSIONS[2]])
    # The trail's description (read with the window's stored analysis in one query): 12 completed runs.
    assert before["trail"]["points"] == 12 and before["trail"]["variant"] == "agent"

    values = [p["value"] for p in whole["points"]]
    thin = client.get(f"/api/v1/trails/{trail_id}", params={"metric": "latency_p75", "max_points": 10}).json()
    kept = [p["value"] for p in thin["points"]]
    assert thin["downsampled"] and len(kept) <= 10
    assert min(values) in kept and max(values) in kept
    assert client.get(f"/api/v1/trails/{trail_id}",
                      params={"metric": "latency_p75", "before": "nope"}).status_code == 404
    overhead = client.get(f"/api/v1/trails/{trail_id}/overhead", params={"metric": "latency_p75", "limit": 3}).json()
    assert overhead["reference_variant"] == "baseline" and overhead["total_points"] == 12
    assert [p["agent_version"] for p in overhead["points"]] == VERSIONS[9:]


def test_points_awaiting_their_analysis_keep_their_place_in_a_window(client, history):
    """A window is read by the cells' stored x-axis keys; a completed run whose analysis has not run yet
    has none (here: cleared for three versions). Its points are still placed by version, in every window."""
    from sqlalchemy import update

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Cell, Run

    slug, runs = history
    run = client.get(f"/api/v1/runs/{runs[VERSIONS[0]]}").json()
    agent = next(v["id"] for v in run["variants"] if v["name"] == "agent")
    trail_id = next(c["trail_id"] for c in run["cells"] if c["variant_id"] == agent and c["latency_p75"])
    params = {"metric": "latency_p75", "limit": 4}
    keyed = [client.get(f"/api/v1/trails/{trail_id}{kind}", params=params).json() for kind in ("", "/overhead")]
    pending = [runs[v] for v in (VERSIONS[1], VERSIONS[9], VERSIONS[11])]
    with unit_of_work() as session:
        ids = session.scalars(Run.__table__.select().with_only_columns(Run.id).where(Run.slug.in_(pending))).all()
        session.execute(update(Cell).where(Cell.run_id.in_(ids)).values(order_key=None))
    for kind, before_keys in zip(("", "/overhead"), keyed):
        newest = client.get(f"/api/v1/trails/{trail_id}{kind}", params=params).json()
        assert [p["agent_version"] for p in newest["points"]] == VERSIONS[8:]
        assert (newest["total_points"], newest["window_start"], newest["earlier"]) == (12, 8, runs[VERSIONS[8]])
        assert newest == before_keys
        earlier = client.get(f"/api/v1/trails/{trail_id}{kind}", params={**params, "before": newest["earlier"]}).json()
        assert [p["agent_version"] for p in earlier["points"]] == VERSIONS[4:8]
        assert earlier["window_start"] == 4
        first = client.get(f"/api/v1/trails/{trail_id}{kind}",
                           params={**params, "before": runs[VERSIONS[4]]}).json()
        assert [p["agent_version"] for p in first["points"]] == VERSIONS[0:4]
        assert (first["window_start"], first["earlier"]) == (0, None)


def test_a_project_read_counts_its_runs_and_open_alerts(client, history, make_project):
    """The project read (one query, plain columns) and the projects list say the same, and both equal
    the database counted directly; a private project is a 404 without its token, readable with it."""
    from datetime import datetime

    from sqlalchemy import text

    from benchtrail.db_boundary import unit_of_work

    slug, runs = history
    with unit_of_work() as session:
        expected = session.execute(text(
            "SELECT (SELECT count(*) FROM runs r WHERE r.project_id = p.id), "
            "(SELECT max(r.created_at) FROM runs r WHERE r.project_id = p.id), "
            "(SELECT count(*) FROM alerts a WHERE a.project_id = p.id "
            " AND a.state IN ('new', 'acknowledged', 'investigating')) "
            "FROM projects p WHERE p.slug = :slug"), {"slug": slug}).one()
    assert expected[0] == len(runs) == len(VERSIONS)
    read = client.get(f"/api/v1/projects/{slug}").json()
    assert (read["run_count"], datetime.fromisoformat(read["latest_run_at"]), read["open_alerts"]) == tuple(expected)
    listed = next(p for p in client.get("/api/v1/projects").json()["items"] if p["slug"] == slug)
    assert listed == read

    private, token = make_project(public=False, role="viewer")
    assert client.get(f"/api/v1/projects/{private}").status_code == 404
    seen = client.get(f"/api/v1/projects/{private}", headers={"Authorization": f"Bearer {token}"}).json()
    assert (seen["slug"], seen["is_public"], seen["run_count"], seen["latest_run_at"], seen["open_alerts"]) == \
        (private, False, 0, None, 0)

"""A kept answer is found on the event loop (`http_cache.kept_on_loop`: the token and the project's revision
read on the loop's own connections, no worker thread), but only within the reader's rights at that moment, and
never at the cost of an answer: a database that went away and came back is read again by the thread path."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from sqlalchemy import text

from benchtrail.auth.tokens import hash_token
from benchtrail.db import get_engine
from tests.support.pg import postgres_down


def _on_loop(client) -> float:  # type: ignore[no-untyped-def]
    found = re.search(r"^benchtrail_answers_on_loop_total (\S+)$", client.get("/metrics").text, re.M)
    return float(found.group(1)) if found else 0.0


def _sql(statement: str, **params: object) -> None:
    with get_engine().begin() as conn:
        conn.execute(text(statement), params)


def test_a_kept_answer_comes_from_the_loop_only_to_whom_may_read_it(client, make_project) -> None:
    slug, token = make_project(role="viewer")
    _, other_token = make_project(role="viewer")
    url = f"/api/v1/projects/{slug}"
    auth = {"Authorization": f"Bearer {token}"}

    first = client.get(url)
    assert first.status_code == 200, first.text
    counted = _on_loop(client)
    again = client.get(url)
    assert (again.json(), again.headers["etag"]) == (first.json(), first.headers["etag"])
    assert _on_loop(client) == counted + 1

    _sql("UPDATE projects SET is_public = false WHERE slug = :s", s=slug)
    assert client.get(url, headers=auth).status_code == 200     # built and kept at the new revision
    counted = _on_loop(client)
    kept = client.get(url, headers=auth)
    assert kept.status_code == 200 and kept.json()["slug"] == slug
    assert _on_loop(client) == counted + 1
    # The same URL at the same revision, read by whom may not see the project: not found, from either path.
    assert client.get(url).status_code == 404
    assert client.get(url, headers={"Authorization": f"Bearer {other_token}"}).status_code == 404
    assert _on_loop(client) == counted + 1

    # A token revoked after the answer was kept (tokens are not part of the revision).
    _sql("UPDATE api_tokens SET revoked_at = now() WHERE token_hash = :h", h=hash_token(token))
    refused = client.get(url, headers=auth)
    assert refused.status_code == 401, refused.text
    assert _on_loop(client) == counted + 1


def test_a_token_whose_last_use_is_due_is_written_by_the_thread_path(client, make_project) -> None:
    slug, token = make_project(public=False, role="viewer")
    url = f"/api/v1/projects/{slug}"
    auth = {"Authorization": f"Bearer {token}"}
    assert client.get(url, headers=auth).status_code == 200
    long_ago = datetime.now(timezone.utc) - timedelta(minutes=5)
    _sql("UPDATE api_tokens SET last_used_at = :t WHERE token_hash = :h", t=long_ago, h=hash_token(token))
    counted = _on_loop(client)
    assert client.get(url, headers=auth).status_code == 200
    assert _on_loop(client) == counted
    with get_engine().connect() as conn:
        used = conn.execute(text("SELECT last_used_at FROM api_tokens WHERE token_hash = :h"),
                            {"h": hash_token(token)}).scalar_one()
    assert used > long_ago + timedelta(minutes=4)


def test_a_database_restart_under_kept_answers_costs_no_answer(client, make_project, infra) -> None:
    slug, _ = make_project()
    url = f"/api/v1/projects/{slug}"
    first = client.get(url).json()
    counted = _on_loop(client)
    assert client.get(url).json() == first
    assert _on_loop(client) == counted + 1   # the loop holds a connection from here on

    with postgres_down(infra):
        down = client.get(url)
        assert down.status_code == 503 and int(down.headers["retry-after"]) >= 1, down.text
    # The loop's connections died with the database: the thread path answers, on new connections.
    assert client.get(url).json() == first
    _sql("UPDATE projects SET name = 'after the restart' WHERE slug = :s", s=slug)
    assert client.get(url).json()["name"] == "after the restart"

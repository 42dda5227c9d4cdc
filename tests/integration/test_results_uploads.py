"""The resumable results upload's rules, through the API in process (real PostgreSQL, the local raw file
store): the server's offset, idempotent and overlapping chunks, a gap refused with the offset to resume
from, a commit refused while bytes are missing, the same key reopening the same session, and the sweeper
dropping a session that can never be committed."""

from __future__ import annotations

import hashlib
import io
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.support.api import hey_plan, post_plan, start

PACKAGE = bytes(range(256)) * 4 + b"tail"  # 1028 bytes


@pytest.fixture()
def claimed(client, make_project, runner_token):  # type: ignore[no-untyped-def]
    slug, token = make_project(role="admin")
    post_plan(client, slug, token, hey_plan("ru", "pool-nobody", "http://127.0.0.1:9", concurrency=1, requests=10))
    run_slug = start(client, slug, token, "ru")
    auth = {"Authorization": f"Bearer {runner_token}"}
    r = client.post(f"/api/v1/runs/{run_slug}/claim", headers=auth)
    assert r.status_code == 200, r.text
    return run_slug, auth


def test_offsets_chunks_and_commit_rules(client, claimed, infra):  # type: ignore[no-untyped-def]
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import ResultsUpload
    from benchtrail.uploads import results as results_uploads

    run_slug, auth = claimed
    base = f"/api/v1/runs/{run_slug}/results/uploads"
    body = {"metadata": {"files": [{"variant": "target"}]},
            "files": [{"name": "out.csv", "size": len(PACKAGE), "sha256": hashlib.sha256(PACKAGE).hexdigest()}]}
    key = {**auth, "Idempotency-Key": "k-1"}
    r = client.post(base, json=body, headers=key)
    assert r.status_code == 201, r.text
    upload = r.json()
    assert (upload["offset"], upload["size"], upload["committed"]) == (0, 1028, False)
    chunk = f"{base}/{upload['id']}"
    octet = {**auth, "Content-Type": "application/octet-stream"}

    def patch(offset: int, data: bytes):  # type: ignore[no-untyped-def]
        return client.patch(chunk, params={"offset": offset}, content=data, headers=octet)

    assert patch(0, PACKAGE[:400]).json()["offset"] == 400
    assert patch(0, PACKAGE[:400]).json()["offset"] == 400          # sent again: nothing changes
    gap = patch(500, PACKAGE[500:600])
    assert gap.status_code == 409 and gap.json()["offset"] == 400    # past the offset: where to resume
    assert patch(300, PACKAGE[300:700]).json()["offset"] == 700      # overlapping: only the new bytes
    assert client.get(chunk, headers=auth).json()["offset"] == 700
    short = client.post(f"{chunk}/commit", headers=auth)
    assert short.status_code == 409 and short.json()["offset"] == 700
    past = patch(700, PACKAGE[700:] + b"x")
    assert past.status_code == 422 and "declared size" in past.json()["detail"]
    again = client.post(base, json=body, headers=key)                 # same key: same session, its offset
    assert again.status_code == 200 and (again.json()["id"], again.json()["offset"]) == (upload["id"], 700)
    # The server's bytes are exactly the package's so far (an independent slice of what was sent).
    from benchtrail import storage

    store = storage.get_store()
    with unit_of_work() as session:
        parts = session.get(ResultsUpload, upload["id"]).parts
    assert store.part_names(upload["id"]) == parts and len(parts) == 2   # the chunk sent again stored nothing
    held = bytearray()
    for name in parts:
        assert int(name[:20]) == len(held)
        buf = io.BytesIO()
        store.read_part(upload["id"], name, buf)
        held += buf.getvalue()
    assert bytes(held) == PACKAGE[:700]

    # Another key while this run has no results yet is a second session.
    second = client.post(base, json=body, headers={**auth, "Idempotency-Key": "k-2"})
    assert second.status_code == 201, second.text

    # The run ends without results: no chunk is taken any more, and the sweeper drops its sessions and their chunks
    # (looked up by id: the sweep drops those of every run in the database, other tests' too).
    r = client.post(f"/api/v1/runs/{run_slug}/finish", json={"status": "cancelled", "reason": "test"}, headers=auth)
    assert r.status_code == 200, r.text
    assert client.patch(chunk, params={"offset": 700}, content=PACKAGE[700:], headers=octet).status_code == 409
    with unit_of_work() as session:
        results_uploads.drop_abandoned(session, datetime.now(timezone.utc))
    for session_id in (upload["id"], second.json()["id"]):
        assert store.part_names(session_id) == []
        assert not (Path(infra["BENCHTRAIL_DATA_DIR"]) / "uploads" / session_id).exists()
        with unit_of_work() as session:
            assert session.get(ResultsUpload, session_id) is None
    assert client.get(chunk, headers=auth).status_code == 404


def test_a_damaged_package_is_refused_at_the_commit_naming_the_file(client, claimed):  # type: ignore[no-untyped-def]
    run_slug, auth = claimed
    base = f"/api/v1/runs/{run_slug}/results/uploads"
    body = {"metadata": {"files": [{"variant": "target"}]},
            "files": [{"name": "out.csv", "size": len(PACKAGE), "sha256": hashlib.sha256(PACKAGE).hexdigest()}]}
    upload = client.post(base, json=body, headers={**auth, "Idempotency-Key": "k-bad"}).json()
    damaged = bytearray(PACKAGE)
    damaged[10] ^= 0xFF
    r = client.patch(f"{base}/{upload['id']}", params={"offset": 0}, content=bytes(damaged),
                     headers={**auth, "Content-Type": "application/octet-stream"})
    assert r.json()["offset"] == len(PACKAGE)
    r = client.post(f"{base}/{upload['id']}/commit", headers=auth)
    assert r.status_code == 400 and r.json()["file"] == "out.csv" and "sha256" in r.json()["reason"]
    run = client.get(f"/api/v1/runs/{run_slug}", headers=auth).json()
    assert run["status"] == "running" and run["files"] == []


def test_results_from_a_token_that_may_not_report_are_refused_before_the_body_is_read(client, make_project):  # type: ignore[no-untyped-def]
    _, uploader = make_project()
    read = {"chunks": 0}

    def body():  # type: ignore[no-untyped-def]
        for _ in range(64):
            read["chunks"] += 1
            yield b"x" * 65536

    for headers, status in (({}, 401), ({"Authorization": f"Bearer {uploader}"}, 404)):
        read["chunks"] = 0
        r = client.post("/api/v1/runs/no-such-run/results", content=body(),
                        headers={**headers, "Content-Type": "multipart/form-data; boundary=b"})
        assert r.status_code == status and read["chunks"] <= 1, (r.text, read)


@pytest.mark.parametrize("sent_before", [len, lambda data: 400], ids=["all-sent", "400-sent"])
def test_a_session_opened_before_parts_were_listed_is_committed(client, claimed, infra, scratch, sent_before):  # type: ignore[no-untyped-def]
    """A session opened before revision 0022 has no list of parts and its parts are named by their offsets
    alone (put back here: the row's `parts` NULL, every part renamed to its offset). Committed as it is, or
    after more chunks (whose parts are then listed after the old ones), it stores exactly the package."""
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Blob, ResultsUpload
    from tests.support.jtl import write_jtl

    run_slug, auth = claimed
    data = write_jtl(scratch / "out.jtl", seed=46, per_group=40).read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    base = f"/api/v1/runs/{run_slug}/results/uploads"
    body = {"metadata": {"files": [{"variant": "target"}]}, "files": [{"name": "out.jtl", "size": len(data), "sha256": sha}]}
    upload = client.post(base, json=body, headers={**auth, "Idempotency-Key": "k-old"}).json()
    chunk = f"{base}/{upload['id']}"
    octet = {**auth, "Content-Type": "application/octet-stream"}
    held = sent_before(data)
    for offset in range(0, held, 300):
        assert client.patch(chunk, params={"offset": offset}, content=data[offset:min(held, offset + 300)],
                            headers=octet).status_code == 200
    folder = Path(infra["BENCHTRAIL_DATA_DIR"]) / "uploads" / upload["id"]
    with unit_of_work() as session:
        row = session.get(ResultsUpload, upload["id"])
        assert row.received == held and len(row.parts) == -(-held // 300)
        for name in row.parts:
            (folder / name).rename(folder / name[:20])
        row.parts = None
    if held < len(data):
        r = client.patch(chunk, params={"offset": held}, content=data[held:], headers=octet)
        assert r.status_code == 200 and r.json()["offset"] == len(data), r.text
    r = client.post(f"{chunk}/commit", headers=auth)
    assert r.status_code == 202 and r.json()["duplicate"] is False, r.text
    assert not folder.exists()
    with unit_of_work() as session:
        blob = session.query(Blob).filter_by(sha256=sha).one()
    assert blob.size == len(data)
    stored = Path(infra["BENCHTRAIL_DATA_DIR"]) / "blobs" / sha[:2] / sha
    assert stored.read_bytes() == data

"""Raw files in an S3-compatible object store: a real S3 server on loopback (moto's standalone server,
its own process), an API and a Celery worker that share no folder (each its own BENCHTRAIL_DATA_DIR)
and talk only through PostgreSQL, Redis and the bucket."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from infra.localstack import VENV_BIN, Process, Redis, answers, celery_worker, free_port, wait_until
from tests.support.env import stack_env as _env
from tests.support.flaky_proxy import FlakyProxy
from tests.support.jtl import fresh_seed, independent_cells, write_jtl
from tests.support.s3 import S3Server

pytestmark = pytest.mark.timeout(600)
PREFIX = "bt-test"


@pytest.fixture(scope="module")
def s3(logdir: Path) -> Iterator[S3Server]:
    server = S3Server(logdir)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def s3_stack(infra, s3, logdir, tmp_path_factory) -> Iterator[dict]:  # type: ignore[no-untyped-def]
    """API and worker on the S3 backend, with their own broker (so the session's local-storage worker
    never takes their jobs) and separate data folders."""
    rd = Redis().start()
    api_dir, worker_dir = tmp_path_factory.mktemp("api-data"), tmp_path_factory.mktemp("worker-data")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    common = {**s3.env(PREFIX), "BENCHTRAIL_REDIS_URL": rd.url}
    api = Process("api-s3", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory", "--host",
                             "127.0.0.1", "--port", str(port)],
                  _env(infra, **common, BENCHTRAIL_DATA_DIR=str(api_dir), BENCHTRAIL_PUBLIC_URL=url), logdir)
    worker = None
    try:
        wait_until(lambda: answers(f"{url}/api/health"), 120, "the S3 API")
        worker = celery_worker("worker-s3", _env(infra, **common, BENCHTRAIL_DATA_DIR=str(worker_dir)), logdir)
        yield {"url": url, "api_dir": api_dir, "worker_dir": worker_dir, "api": api, "worker": worker}
    finally:
        if worker is not None:
            worker.stop()
        api.stop()
        rd.stop()


def blobs_on_disk(folder: Path) -> list[Path]:
    return [p for p in (folder / "blobs").rglob("*") if p.is_file()] if (folder / "blobs").is_dir() else []


def test_an_upload_is_stored_in_the_bucket_and_ingested_by_a_worker_without_the_api_folder(
        s3, s3_stack, make_project, scratch):
    slug, token = make_project()
    baseline = write_jtl(scratch / "baseline.jtl", seed=fresh_seed())
    agent = write_jtl(scratch / "agent.jtl", seed=fresh_seed(), slowdown=1.2)
    agent_gz = scratch / "agent.jtl.gz"
    agent_gz.write_bytes(gzip.compress(agent.read_bytes()))
    sent = {"baseline.jtl": baseline.read_bytes(), "agent.jtl.gz": agent_gz.read_bytes()}
    meta = {"files": [{"variant": "baseline"}, {"variant": "agent"}], "agent_version": "1.0.0"}
    with httpx.Client(base_url=s3_stack["url"], headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        r = http.post(f"/api/v1/projects/{slug}/runs", data={"metadata": json.dumps(meta)},
                      files=[("files", (name, data)) for name, data in sent.items()])
        assert r.status_code == 202, r.text
        run_slug = r.json()["run"]
        run = wait_until(lambda: (d := http.get(f"/api/v1/runs/{run_slug}").json())["status"]
                         in ("completed", "failed") and d, 120, "the run to be ingested")
        assert run["status"] == "completed", (run["status_detail"], s3_stack["worker"].output()[-3000:])

        # The bytes are in the bucket, under the prefix, by sha256; neither folder holds a blob.
        keys = s3.keys(f"{PREFIX}/blobs/")
        for data in sent.values():
            sha = hashlib.sha256(data).hexdigest()
            assert f"{PREFIX}/blobs/{sha[:2]}/{sha}" in keys
            assert s3.read(f"{PREFIX}/blobs/{sha[:2]}/{sha}") == data
        assert blobs_on_disk(s3_stack["api_dir"]) == [] and blobs_on_disk(s3_stack["worker_dir"]) == []
        assert "results.ingest" in s3_stack["worker"].output()

        # Cells equal an independent reading of the files (csv + numpy).
        variants = {v["id"]: v["name"] for v in run["variants"]}
        scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
        loads = {l["id"]: l for l in run["loads"]}
        for name, path in (("baseline", baseline), ("agent", agent)):
            expected = independent_cells(path)
            got = {(scenarios[c["scenario_id"]], int(loads[c["load_id"]]["value"])): c for c in run["cells"]
                   if variants[c["variant_id"]] == name and scenarios[c["scenario_id"]] != "*"
                   and c["count"] is not None}
            assert set(got) == set(expected)
            for key, exp in expected.items():
                assert got[key]["count"] == exp["count"] and got[key]["errors"] == exp["errors"]
                assert got[key]["latency_mean"] == pytest.approx(exp["latency_mean"], rel=1e-12)
                assert got[key]["latency_p75"] == pytest.approx(exp["latency_p75"], rel=1e-3)

        # Every raw file downloads through the API, streamed from the bucket, exactly as uploaded.
        assert sorted(f["filename"] for f in run["files"]) == sorted(sent)
        for f in run["files"]:
            got_bytes = http.get(f["download_url"])
            assert got_bytes.status_code == 200
            assert got_bytes.content == sent[f["filename"]]
            assert got_bytes.headers["content-length"] == str(len(sent[f["filename"]]))
            assert f["filename"] in got_bytes.headers["content-disposition"]


def test_a_refused_upload_leaves_nothing_in_the_bucket(s3, s3_stack, make_project, scratch):
    """The second file is bad: a 400 naming it, and neither file reaches the bucket."""
    slug, token = make_project()
    good = write_jtl(scratch / "good.jtl", seed=21).read_bytes()
    before = s3.keys(f"{PREFIX}/")
    meta = {"files": [{"variant": "a"}, {"variant": "b"}]}
    with httpx.Client(timeout=60) as http:
        r = http.post(f"{s3_stack['url']}/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                      data={"metadata": json.dumps(meta)},
                      files=[("files", ("good.jtl", good)), ("files", ("bad.jtl", b"timeStamp,elapsed\nnot,a number\n"))])
    assert r.status_code == 400, r.text
    assert r.json()["file"] == "bad.jtl"
    assert s3.keys(f"{PREFIX}/") == before


@dataclass
class _SameBytes:
    data: bytes
    sha: str
    key: str          # its object's key in the bucket
    meta: Any         # the upload's metadata: one baseline file
    project: str
    received: Callable[[], list]   # the bytes received as an upload's file, anew each call


@contextmanager
def _uploads_in_bucket(s3: S3Server, monkeypatch: pytest.MonkeyPatch, scratch: Path,
                       prefix: str) -> Iterator[_SameBytes]:
    """This process's uploads stored in the bucket under `prefix`, to a project of their own, of one JTL's
    bytes, which no other test stores (`fresh_seed`)."""
    from benchtrail import storage
    from benchtrail.config import get_settings
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.projects.schemas import ProjectCreate
    from benchtrail.projects.service import create_project
    from benchtrail.uploads.files import RawSink
    from benchtrail.uploads.service import parse_metadata

    for k, v in s3.env(prefix).items():
        monkeypatch.setenv(k, v)
    get_settings.cache_clear()
    storage.get_store.cache_clear()
    try:
        name = f"{prefix}.jtl"
        data = write_jtl(scratch / name, seed=fresh_seed()).read_bytes()
        sha = hashlib.sha256(data).hexdigest()

        def received() -> list:
            sink = RawSink(name, scratch)
            sink.write(data)
            return [sink.finish()]

        project = f"{prefix}-{uuid.uuid4().hex[:8]}"
        with unit_of_work() as session:
            create_project(session, ProjectCreate(slug=project, is_public=True))
        yield _SameBytes(data, sha, f"{prefix}/blobs/{sha[:2]}/{sha}",
                         parse_metadata(json.dumps({"files": [{"variant": "baseline"}]})), project, received)
    finally:
        monkeypatch.undo()
        get_settings.cache_clear()
        storage.get_store.cache_clear()


ADMIN = {"token_id": 1, "project_id": None, "role": "admin", "name": "test"}


def test_an_object_kept_for_a_failed_transaction_is_removed_and_written_again_for_another_upload(
        s3, infra, scratch, monkeypatch):
    """Files are stored before the transaction that records them. When it fails, the object the upload
    created is removed (no blob row refers to it) and no row is left. A second upload of the same bytes
    that found the object there before the removal writes it again under the content's lock: the blob
    it records exists in the bucket."""
    from benchtrail.auth.principal import Principal
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.uploads import repository
    from benchtrail.uploads.endpoints import keep_and_record
    from benchtrail.uploads.service import KeptFiles, accept_upload

    with _uploads_in_bucket(s3, monkeypatch, scratch, "rollback") as up:
        first, second = KeptFiles(up.meta.files, up.received()), KeptFiles(up.meta.files, up.received())

        def record(_session) -> None:  # type: ignore[no-untyped-def]
            assert first.files[0].created and s3.keys("rollback/") == [up.key]
            _keep(second)   # the same bytes, meanwhile
            assert not second.files[0].created
            raise RuntimeError("the first upload's transaction failed after its files were kept")

        with pytest.raises(RuntimeError, match="after its files were kept"):
            keep_and_record(first, record)
        assert s3.keys("rollback/") == []
        with unit_of_work() as session:
            assert repository.blob_by_sha256(session, up.sha) is None

        with unit_of_work() as session:
            accept_upload(session, Principal(**ADMIN), up.project, up.meta, second, None)
        assert s3.keys("rollback/") == [up.key] and s3.read(up.key) == up.data
        with unit_of_work() as session:
            assert repository.blob_by_sha256(session, up.sha) is not None


def _keep(kept) -> None:  # type: ignore[no-untyped-def]
    """An upload's first two steps (uploads.endpoints.keep_and_record): its files named, then written."""
    from benchtrail.db_boundary import unit_of_work

    with unit_of_work() as session:
        kept.note(session)
    kept.put()


def test_a_failed_upload_keeps_the_row_of_another_upload_of_the_same_bytes(s3, infra, scratch, monkeypatch):
    """Two uploads of the same bytes: the first's transaction fails and it removes the object it created.
    The second writes the object again while recording it, and its process dies before the commit (its
    transaction rolls back, its clean-up never runs). The object is in the bucket with no row referring to
    it; the second upload's row in `unrecorded_blobs` is still there (the first's clean-up dropped only its
    own), so the sweeper removes the object an hour later."""
    from datetime import datetime, timedelta, timezone

    from benchtrail.auth.principal import Principal
    from benchtrail.db import get_sessionmaker
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.uploads import repository
    from benchtrail.uploads.endpoints import keep_and_record
    from benchtrail.uploads.service import KeptFiles, accept_upload
    from benchtrail_worker.tasks.sweeper import remove_unrecorded

    with _uploads_in_bucket(s3, monkeypatch, scratch, "twice") as up:
        first, second = KeptFiles(up.meta.files, up.received()), KeptFiles(up.meta.files, up.received())

        def record(_session) -> None:  # type: ignore[no-untyped-def]
            assert first.files[0].created
            _keep(second)   # the same bytes, found there; never settled: its process dies below
            raise RuntimeError("the first upload's transaction failed")

        with pytest.raises(RuntimeError, match="failed"):
            keep_and_record(first, record)
        assert s3.keys("twice/") == []

        session = get_sessionmaker()()   # the second records the file, writing it again, and dies
        accept_upload(session, Principal(**ADMIN), up.project, up.meta, second, None)
        assert s3.keys("twice/") == [up.key]
        session.rollback()
        session.close()
        with unit_of_work() as session:
            assert repository.blob_by_sha256(session, up.sha) is None

        assert up.sha not in remove_unrecorded(datetime.now(timezone.utc)) and s3.keys("twice/") == [up.key]
        assert up.sha in remove_unrecorded(datetime.now(timezone.utc) + timedelta(minutes=61))
        assert s3.keys("twice/") == []


@contextmanager
def _api_via(proxy: FlakyProxy, s3: S3Server, infra: dict[str, str], logdir: Path, prefix: str, data_dir: Path,
             **env: str) -> Iterator[str]:
    """The production server, one process, reaching the bucket (under `prefix`) through `proxy`, with a broker
    of its own (its jobs stay there: no worker of the session takes them); yields its URL."""
    rd = Redis().start()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    api = Process(f"api-{prefix}", [str(VENV_BIN / "benchtrail-api"), "--port", str(port), "--workers", "1"],
                  _env(infra, **{**s3.env(prefix), "BENCHTRAIL_S3_ENDPOINT_URL": proxy.url}, BENCHTRAIL_REDIS_URL=rd.url,
                       BENCHTRAIL_DATA_DIR=str(data_dir), BENCHTRAIL_PUBLIC_URL=url, **env), logdir)
    try:
        wait_until(lambda: answers(f"{url}/api/health"), 300, "the API")
        yield url
    finally:
        proxy.stop()
        api.stop()
        rd.stop()


def test_an_upload_waiting_on_the_object_store_holds_no_database_connection(
        s3, infra, logdir, make_project, admin_token, tmp_path):
    """The production server with one process and one connection for writes (BENCHTRAIL_API_DB_CONNECTIONS
    3: one each for writes, reads and the event loop's reads), the bucket behind a proxy that holds the
    upload's object until released. While the upload waits on the store, a write (a project created) is
    answered; once the store answers, the upload is accepted and its object is in the bucket. When the
    upload's transaction was open while its object was written, the write waited for the one connection
    until the pool gave up: 503."""
    slug, token = make_project()
    proxy = FlakyProxy(("127.0.0.1", s3.port), "hold",
                       requests=re.compile(rb"PUT /" + s3.bucket.encode() + rb"/held/blobs/"))
    with _api_via(proxy, s3, infra, logdir, "held", tmp_path / "data", BENCHTRAIL_API_DB_CONNECTIONS="3") as url:
        jtl = write_jtl(tmp_path / "held.jtl", seed=fresh_seed())
        other = f"held-{uuid.uuid4().hex[:8]}"
        with ThreadPoolExecutor(1) as pool, httpx.Client(timeout=120) as http:
            upload = pool.submit(http.post, f"{url}/api/v1/projects/{slug}/runs",
                                 headers={"Authorization": f"Bearer {token}"},
                                 data={"metadata": json.dumps({"files": [{"variant": "baseline"}]})},
                                 files=[("files", ("held.jtl", jtl.read_bytes()))])
            assert proxy.held.wait(60), "the upload never wrote to the object store"
            created = http.post(f"{url}/api/v1/projects", json={"slug": other, "name": other},
                                headers={"Authorization": f"Bearer {admin_token}"})
            upload_waited = not upload.done()
            proxy.release.set()
            accepted = upload.result()
        assert created.status_code == 201, created.text
        assert upload_waited
        assert accepted.status_code == 202, accepted.text
        sha = hashlib.sha256(jtl.read_bytes()).hexdigest()
        assert s3.keys("held/") == [f"held/blobs/{sha[:2]}/{sha}"]


def _unclaimed_run(client, make_project, plan: str) -> str:  # type: ignore[no-untyped-def]
    """A plan run on a pool no runner serves: it stays queued until the test claims it as a runner would."""
    from tests.support.api import hey_plan, post_plan, start

    slug, token = make_project(role="admin")
    post_plan(client, slug, token, hey_plan(plan, "pool-nobody", "http://127.0.0.1:9", concurrency=1, requests=10))
    return start(client, slug, token, plan)


def _open_results_upload(http: httpx.Client, run_slug: str, jtl: Path, folder: Path) -> tuple[str, bytes]:
    """Claim the run, package `jtl` as the runner does and open its resumable upload: (the session's path, the
    package's bytes)."""
    from benchtrail_runner import delivery

    assert http.post(f"/api/v1/runs/{run_slug}/claim", params={"runner": "test"}).status_code == 200
    pkg = delivery.package(run_slug, {"files": [{"variant": "target"}]}, [jtl], folder)
    data = pkg.files[0].read_bytes()
    base = f"/api/v1/runs/{run_slug}/results/uploads"
    opened = http.post(base, headers={"Idempotency-Key": pkg.idempotency_key}, json={
        "metadata": pkg.metadata, "files": [{"name": pkg.files[0].name, "size": len(data),
                                             "sha256": hashlib.sha256(data).hexdigest()}]})
    assert opened.status_code == 201, opened.text
    return f"{base}/{opened.json()['id']}", data


def test_a_runners_chunked_results_go_through_the_bucket(s3, s3_stack, client, make_project, runner_token, scratch):
    """A plan run's results sent by the runner's own delivery code in 16 KiB chunks: the chunks are kept in
    the bucket until the commit, then removed; the package is stored as blobs and ingested by the worker."""
    from benchtrail_runner import delivery

    run_slug = _unclaimed_run(client, make_project, "s3")
    runner = {"Authorization": f"Bearer {runner_token}"}
    with httpx.Client(base_url=s3_stack["url"], headers=runner, timeout=60) as http:
        r = http.post(f"/api/v1/runs/{run_slug}/claim", params={"runner": "test"})
        assert r.status_code == 200, r.text
        jtl = write_jtl(scratch / "out.jtl", seed=41, per_group=1500)
        pkg = delivery.package(run_slug, {"files": [{"variant": "target"}]}, [jtl], scratch / "upload")
        assert pkg.packed_bytes > 4 * 16384
        waits: list[str] = []
        ack = delivery.send(pkg, s3_stack["url"], runner_token, retry_s=30, on_wait=waits.append, chunk_bytes=16384)
        assert ack["duplicate"] is False and ack["status"] == "ingesting", (ack, waits)
        assert s3.keys(f"{PREFIX}/uploads/") == []  # the chunks went once the results were committed
        sha = hashlib.sha256(pkg.files[0].read_bytes()).hexdigest()
        assert s3.read(f"{PREFIX}/blobs/{sha[:2]}/{sha}") == pkg.files[0].read_bytes()

        again = delivery.send(pkg, s3_stack["url"], runner_token, retry_s=30, chunk_bytes=16384)
        assert again["duplicate"] is True
        run = wait_until(lambda: (d := http.get(f"/api/v1/runs/{run_slug}").json())["status"]
                         in ("completed", "failed") and d, 120, "the run to be ingested")
    assert run["status"] == "completed", run["status_detail"]
    assert len(run["files"]) == 1 and run["files"][0]["sha256"] == sha
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l for l in run["loads"]}
    got = {(scenarios[c["scenario_id"]], int(loads[c["load_id"]]["value"])): c for c in run["cells"]
           if scenarios[c["scenario_id"]] != "*" and c["count"] is not None}
    expected = independent_cells(jtl)
    assert set(got) == set(expected)
    for key, exp in expected.items():
        assert got[key]["count"] == exp["count"] and got[key]["errors"] == exp["errors"]
        assert got[key]["latency_p75"] == pytest.approx(exp["latency_p75"], rel=1e-3)


def test_a_commit_sent_twice_answers_duplicate_when_the_other_took_the_chunks(
        s3, infra, logdir, client, make_project, runner_token, tmp_path):
    """A package's commit is put together from its chunks with no transaction open, so a commit sent again
    (a runner that stopped waiting for the first) works beside the first. Here the first commit's read of
    its chunk is held by a proxy in front of the bucket; the second commit records the results and removes
    the chunks; the first, released, finds its chunk gone and answers as the results are: 200 duplicate.
    One set of files is recorded."""
    run_slug = _unclaimed_run(client, make_project, "twice")
    proxy = FlakyProxy(("127.0.0.1", s3.port), "hold",
                       requests=re.compile(rb"GET /" + s3.bucket.encode() + rb"/commit-twice/uploads/"))
    with _api_via(proxy, s3, infra, logdir, "commit-twice", tmp_path / "data") as url:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {runner_token}"}, timeout=120) as http:
            chunk, data = _open_results_upload(http, run_slug, write_jtl(tmp_path / "out.jtl", seed=43), tmp_path / "upload")
            sent = http.patch(chunk, params={"offset": 0}, content=data,
                              headers={"Content-Type": "application/octet-stream"})
            assert sent.status_code == 200 and sent.json()["offset"] == len(data), sent.text
            with ThreadPoolExecutor(1) as pool:
                first = pool.submit(http.post, f"{chunk}/commit")
                assert proxy.held.wait(60), "the first commit never read its chunk"
                second = http.post(f"{chunk}/commit")
                proxy.release.set()
                first_answer = first.result()
            assert second.status_code == 202 and second.json()["duplicate"] is False, second.text
            assert first_answer.status_code == 200 and first_answer.json()["duplicate"] is True, first_answer.text
            run = http.get(f"/api/v1/runs/{run_slug}").json()
        assert [f["sha256"] for f in run["files"]] == [hashlib.sha256(data).hexdigest()]
        assert s3.keys("commit-twice/uploads/") == []


def test_a_chunk_waiting_on_the_object_store_holds_no_database_connection_or_lock(
        s3, infra, logdir, client, make_project, runner_token, admin_token, tmp_path):
    """A chunk of a resumable upload is written to the bucket with no transaction open. The production server,
    one process and one connection for writes (BENCHTRAIL_API_DB_CONNECTIONS 3), the bucket behind a proxy that
    holds the first chunk's object until released. Meanwhile a write (a project created) is answered, and the
    same chunk sent again (a runner that stopped waiting) is stored and recorded. Released, the first request
    finds the offset moved on, removes its own object and answers the offset; the commit stores the package.
    When the chunk's transaction was open while its object was written, the project waited for the one write
    connection until the pool gave up (503), and the chunk sent again for the session's row."""
    run_slug = _unclaimed_run(client, make_project, "chunk")
    proxy = FlakyProxy(("127.0.0.1", s3.port), "hold",
                       requests=re.compile(rb"PUT /" + s3.bucket.encode() + rb"/chunks/uploads/"))
    with _api_via(proxy, s3, infra, logdir, "chunks", tmp_path / "data", BENCHTRAIL_API_DB_CONNECTIONS="3") as url:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {runner_token}"}, timeout=120) as http:
            chunk, data = _open_results_upload(http, run_slug, write_jtl(tmp_path / "out.jtl", seed=44), tmp_path / "upload")
            sha = hashlib.sha256(data).hexdigest()

            def send() -> httpx.Response:
                return http.patch(chunk, params={"offset": 0}, content=data,
                                  headers={"Content-Type": "application/octet-stream"})

            with ThreadPoolExecutor(1) as pool:
                first = pool.submit(send)
                assert proxy.held.wait(60), "the chunk never reached the object store"
                other = f"chunk-{uuid.uuid4().hex[:8]}"
                created = http.post("/api/v1/projects", json={"slug": other, "name": other},
                                    headers={"Authorization": f"Bearer {admin_token}"})
                again = send()
                first_waited = not first.done()
                proxy.release.set()
                first_answer = first.result()
            assert created.status_code == 201, created.text
            assert again.status_code == 200 and again.json()["offset"] == len(data), again.text
            assert first_waited
            assert first_answer.status_code == 200 and first_answer.json()["offset"] == len(data), first_answer.text
            assert len(s3.keys("chunks/uploads/")) == 1   # the first request's object is gone again
            committed = http.post(f"{chunk}/commit")
            assert committed.status_code == 202 and committed.json()["duplicate"] is False, committed.text
            assert http.get(f"/api/v1/runs/{run_slug}").json()["files"][0]["sha256"] == sha
        assert s3.keys("chunks/uploads/") == []
        assert s3.read(f"chunks/blobs/{sha[:2]}/{sha}") == data


def test_backup_with_the_s3_backend_holds_the_database_and_names_the_bucket(s3, infra, tmp_path):
    """`make backup` with BENCHTRAIL_STORAGE=s3: the database only (the bucket is the user's to back up),
    the manifest and the output say where the raw files are."""
    import subprocess
    import sys
    import tarfile

    from infra.localstack import REPO

    archive = tmp_path / "bt.tar"
    env = _env(infra, **s3.env(PREFIX), BENCHTRAIL_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run([sys.executable, str(REPO / "infra/scripts/backup.py"), "backup", str(archive)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"the raw files stay in s3://{s3.bucket}/{PREFIX}/" in done.stdout
    with tarfile.open(archive) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
        names = tar.getnames()
    assert manifest["blobs_in"] == f"s3://{s3.bucket}/{PREFIX}/" and manifest["blobs"] == []
    assert sorted(names) == ["database.dump", "manifest.json"]

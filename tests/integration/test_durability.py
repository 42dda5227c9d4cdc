"""The database `make up` gives users: durable, closed by passwords, no permission changes above
its folder; and backup/restore of the database plus the raw uploads."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

from infra.localstack import REPO, Postgres, answers, free_port, wait_until
from tests.support.api import wait_analysed
from tests.support.jtl import fresh_seed, write_jtl

SCRIPT = str(REPO / "infra/scripts/postgres.sh")
sys.path.insert(0, str(REPO / "infra" / "scripts"))


def _connect(port: int, user: str, password: str | None) -> psycopg.Connection:
    kw = {"password": password} if password is not None else {}
    return psycopg.connect(host="127.0.0.1", port=port, user=user, dbname="postgres", connect_timeout=5, **kw)


def test_default_cluster_is_durable_and_needs_a_password():
    base = Path(tempfile.mkdtemp(prefix="bt-durable-"))
    base.chmod(0o755)
    pgdir, pwfile, port = base / "pg", base / "secrets" / "superuser", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    try:
        subprocess.run([SCRIPT, "start", str(pgdir), str(port), "--password-file", str(pwfile)], check=True, env=env)
        assert stat.S_IMODE(pwfile.stat().st_mode) == 0o600
        assert stat.S_IMODE(pwfile.parent.stat().st_mode) == 0o700
        password = pwfile.read_text().strip()
        assert len(password) >= 32
        with _connect(port, "postgres", password) as c:
            settings = {name: c.execute(f"SHOW {name}").fetchone()[0]
                        for name in ("fsync", "synchronous_commit", "full_page_writes", "password_encryption")}
            hba = c.execute("SELECT DISTINCT auth_method FROM pg_hba_file_rules").fetchall()
        assert settings == {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on",
                            "password_encryption": "scram-sha-256"}
        assert hba == [("scram-sha-256",)]
        with pytest.raises(psycopg.OperationalError, match="no password supplied"):
            _connect(port, "postgres", None)
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            _connect(port, "postgres", "not-the-password")
        # The application role gets its own generated password (createdb.sh), also mode 600.
        app_pw = base / "secrets" / "app"
        subprocess.run([str(REPO / "infra/scripts/createdb.sh"), str(port), "benchtrail", str(app_pw), str(pwfile)],
                       check=True, env=env)
        assert stat.S_IMODE(app_pw.stat().st_mode) == 0o600
        with psycopg.connect(host="127.0.0.1", port=port, user="benchtrail", dbname="benchtrail",
                             password=app_pw.read_text().strip()) as c:
            assert c.execute("SELECT current_user").fetchone() == ("benchtrail",)
        # A restart keeps it durable and closed.
        subprocess.run([SCRIPT, "stop", str(pgdir), str(port)], check=True)
        subprocess.run([SCRIPT, "start", str(pgdir), str(port)], check=True, env=env)
        with _connect(port, "postgres", password) as c:
            assert c.execute("SHOW fsync").fetchone() == ("on",)
        with pytest.raises(psycopg.OperationalError):
            _connect(port, "postgres", None)
    finally:
        subprocess.run([SCRIPT, "stop", str(pgdir), str(port)], check=False)
        subprocess.run(["rm", "-rf", str(base)], check=False)


def test_a_trust_cluster_of_an_earlier_make_up_is_closed_on_its_next_start():
    """A cluster an older `make up` made (trust, no mode file) gets its superuser password in single-user mode
    (no connection at all while it still trusts everyone), then starts durable and closed; its data is kept.
    Its folder has spaces in its path."""
    base = Path(tempfile.mkdtemp(prefix="bt-trust-")) / "a folder with spaces"
    base.mkdir()
    base.parent.chmod(0o755)
    pgdir, pwfile, port = base / "pg", base / "secrets" / "superuser", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    try:
        subprocess.run([SCRIPT, "start", str(pgdir), str(port), "--test"], check=True, env=env)
        with _connect(port, "postgres", None) as c:   # trust
            c.execute("CREATE TABLE kept (v int)")
            c.execute("INSERT INTO kept VALUES (42)")
            c.commit()
        subprocess.run([SCRIPT, "stop", str(pgdir), str(port)], check=True)
        (pgdir / "mode").unlink()   # as before modes existed
        subprocess.run([SCRIPT, "start", str(pgdir), str(port), "--password-file", str(pwfile)], check=True, env=env)
        assert (pgdir / "mode").read_text().strip() == "durable"
        with pytest.raises(psycopg.OperationalError, match="no password supplied"):
            _connect(port, "postgres", None)
        with _connect(port, "postgres", pwfile.read_text().strip()) as c:
            assert c.execute("SHOW fsync").fetchone() == ("on",)
            assert c.execute("SELECT v FROM kept").fetchall() == [(42,)]
    finally:
        subprocess.run([SCRIPT, "stop", str(pgdir), str(port)], check=False)
        subprocess.run(["rm", "-rf", str(base.parent)], check=False)


def test_start_never_changes_permissions_above_its_folder():
    """A parent the postgres user cannot enter is reported, not opened up."""
    if os.geteuid() != 0:
        pytest.skip("only root hands the data folder to the postgres user")
    base = Path(tempfile.mkdtemp(prefix="bt-closed-"))  # mode 700, owned by root
    before = {p: stat.S_IMODE(p.stat().st_mode) for p in (base, base.parent)}
    try:
        proc = subprocess.run([SCRIPT, "start", str(base / "pg"), str(free_port())], capture_output=True, text=True)
        assert proc.returncode != 0
        assert f"cannot enter {base}" in proc.stderr
        assert {p: stat.S_IMODE(p.stat().st_mode) for p in before} == before
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)


def _table_counts(url: str) -> dict[str, int]:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as c:
            tables = [r[0] for r in c.execute(text(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"))]
            counts = {t: c.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one() for t in tables}
            # The sweeper folds change rows into per-project counts at any moment (benchtrail/revisions.py), also
            # between a backup and this count: their sum is what a backup keeps, not how it is split.
            counts["project changes, folded or not"] = counts.pop("project_changes") + c.execute(text(
                "SELECT coalesce(sum(folded), 0) FROM project_revisions")).scalar_one()
            counts.pop("project_revisions")
            return counts
    finally:
        engine.dispose()


def _blob_hashes(data_dir: Path) -> dict[str, str]:
    out = {}
    for path in sorted((data_dir / "blobs").glob("*/*")):
        out[str(path.relative_to(data_dir))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def test_backup_restores_into_a_fresh_database_with_the_same_runs_and_raw_files(client, worker, make_project,
                                                                                  scratch, infra):
    from backup import backup, restore

    slug, token = make_project()
    headers = {"Authorization": f"Bearer {token}"}
    runs = []
    for seed in (31, 32):
        f = write_jtl(scratch / f"r{seed}.jtl", seed=seed, per_group=60)
        r = client.post(f"/api/v1/projects/{slug}/runs", headers=headers,
                        data={"metadata": json.dumps({"files": [{"variant": "baseline"}]})},
                        files=[("files", (f.name, f.read_bytes()))])
        assert r.status_code == 202, r.text
        runs.append(r.json()["run"])
    for run in runs:
        wait_analysed(client, run, 90)

    source_url, source_data = infra["BENCHTRAIL_DATABASE_URL"], Path(infra["BENCHTRAIL_DATA_DIR"])
    archive = scratch / "backup.tar"
    # The database is this test process's, shared with the jobs earlier tests left to the worker: a backup whose
    # counts were the same just before and just after it kept exactly those (up to 5 tries while others write).
    for _ in range(5):
        before = _table_counts(source_url), _blob_hashes(source_data)
        manifest = backup(source_url, source_data, archive)
        counts, blobs = _table_counts(source_url), _blob_hashes(source_data)
        if (counts, blobs) == before:
            break
    assert (counts, blobs) == before, "the database kept changing during every backup"
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert counts["runs"] >= 2 and counts["cells"] > 0 and len(blobs) >= 2
    assert sorted(b["sha256"] for b in manifest["blobs"]) == sorted(blobs.values())

    fresh = Postgres().start()  # an empty database: no schema at all
    fresh_data = scratch / "restored-data"
    try:
        restore(archive, fresh.url, fresh_data)
        assert _table_counts(fresh.url) == counts
        assert _blob_hashes(fresh_data) == blobs
        # Each blob's name is the sha256 of its content, computed here independently.
        assert all(Path(k).name == v for k, v in blobs.items())
        from sqlalchemy import create_engine, text

        for url in (source_url, fresh.url):
            engine = create_engine(url)
            with engine.connect() as c:
                rows = c.execute(text("SELECT r.slug, r.status, r.analysis_status, count(c.id), sum(c.count) "
                                      "FROM runs r LEFT JOIN cells c ON c.run_id = r.id WHERE r.slug = ANY(:s) "
                                      "GROUP BY r.slug, r.status, r.analysis_status ORDER BY r.slug"),
                                 {"s": runs}).all()
            engine.dispose()
            if url == source_url:
                source_rows = rows
        assert rows == source_rows and len(rows) == 2
        # Restoring again over the restored database replaces it (same counts, nothing doubled).
        restore(archive, fresh.url, fresh_data)
        assert _table_counts(fresh.url) == counts
    finally:
        fresh.stop()


def test_a_stored_file_reaches_the_disk_before_its_name_and_its_name_before_put_returns(tmp_path, monkeypatch):
    """A run row PostgreSQL committed must never point at a blob an OS crash takes back: the blob's bytes
    are synced before the link (the object) or rename (a part) makes them visible, that name (and each folder created
    for it) after."""
    from benchtrail import storage

    events: list[tuple[str, str]] = []
    real_fsync, real_replace, real_link = os.fsync, os.replace, os.link

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src: os.PathLike, dst: os.PathLike) -> None:
        events.append(("replace", f"{src} -> {dst}"))
        real_replace(src, dst)

    def link(src: os.PathLike, dst: os.PathLike) -> None:
        events.append(("link", f"{src} -> {dst}"))
        real_link(src, dst)

    monkeypatch.setattr(storage.os, "fsync", fsync)
    monkeypatch.setattr(storage.os, "replace", replace)
    monkeypatch.setattr(storage.os, "link", link)
    store = storage.LocalStore(tmp_path / "data")
    (tmp_path / "data").mkdir()
    raw = tmp_path / "upload.jtl"
    raw.write_bytes(b"timeStamp,elapsed\n1,2\n")
    sha = hashlib.sha256(raw.read_bytes()).hexdigest()

    assert store.put(raw, sha) is True
    blob = tmp_path / "data" / "blobs" / sha[:2] / sha
    part = f"{blob.parent}/{sha}.{os.getpid()}.{threading.get_ident()}.part"
    assert events == [
        ("link", f"{raw} -> {part}"),                      # the received file, not copied
        ("fsync", part),                                   # the bytes, under the temporary name
        ("link", f"{part} -> {blob}"),                     # the object's name, only if absent
        ("fsync", str(blob.parent)),                       # the new name
        ("fsync", str(blob.parent.parent)),                # blobs/<xx>/ was created: its entry in blobs/
        ("fsync", str(tmp_path / "data")),                 # blobs/ was created: its entry in the data folder
    ]
    assert blob.read_bytes() == raw.read_bytes()

    events.clear()
    names = (f"{0:020d}-{'a' * 16}", f"{23:020d}-{'b' * 16}")
    for name in names:
        store.put_part("s1", name, raw)
    folder = tmp_path / "data" / "uploads" / "s1"
    first, second = (f"{folder}/.{name}.{os.getpid()}.part" for name in names)
    assert events == [
        ("fsync", first), ("replace", f"{first} -> {folder}/{names[0]}"),
        ("fsync", str(folder)), ("fsync", str(folder.parent)), ("fsync", str(tmp_path / "data")),
        ("fsync", second), ("replace", f"{second} -> {folder}/{names[1]}"), ("fsync", str(folder)),
    ]
    assert store.part_names("s1") == list(names)


def test_an_upload_killed_between_storing_and_recording_leaves_a_file_the_sweeper_removes(
        client, infra, logdir, make_project, scratch):
    """The production server stores an upload's file, then waits for the content's lock to record it (the
    test holds that lock) and is killed there with SIGKILL: the file is on disk, no run and no blob row
    refer to it, and `unrecorded_blobs` names it. Beat's sweeper leaves it for an hour (an upload may still be
    recording it), then removes it. A file a run refers to stays, also when a killed upload of the same bytes
    left its row. The request's scratch folder, left too, is removed when an API starts once nothing changed
    in it for a day."""
    import signal
    import threading
    import uuid

    import httpx
    from sqlalchemy import select, text

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Blob, Project, Run, UnrecordedBlob
    from benchtrail.uploads import repository
    from benchtrail_worker.tasks.sweeper import sweep
    from infra.localstack import VENV_BIN, Process
    from tests.support.env import stack_env as _env

    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    data_dir = Path(infra["BENCHTRAIL_DATA_DIR"])
    seed = fresh_seed()
    killed_jtl, kept_jtl = write_jtl(scratch / "killed.jtl", seed=seed), write_jtl(scratch / "kept.jtl", seed=seed + 1)
    killed_sha = hashlib.sha256(killed_jtl.read_bytes()).hexdigest()
    kept_sha = hashlib.sha256(kept_jtl.read_bytes()).hexdigest()
    killed_blob, kept_blob = (data_dir / "blobs" / s[:2] / s for s in (killed_sha, kept_sha))

    def start_api() -> tuple[Process, str]:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        api = Process(f"api-killed-{uuid.uuid4().hex[:6]}", [str(VENV_BIN / "benchtrail-api"), "--port", str(port),
                                                             "--workers", "1"],
                      _env(infra, BENCHTRAIL_PUBLIC_URL=url), logdir)
        wait_until(lambda: answers(f"{url}/api/health"), 120, "the API")
        return api, url

    scratch_dir = data_dir / "tmp"
    folders_before = set(scratch_dir.glob("upload-*"))
    api, url = start_api()
    replies: list[object] = []
    try:
        with unit_of_work() as holder:   # as an upload of the same bytes recording them holds it
            repository.lock_blobs(holder, [killed_sha])

            def post() -> None:
                try:
                    with httpx.Client(timeout=60) as http:
                        replies.append(http.post(f"{url}/api/v1/projects/{slug}/runs", headers=auth,
                                                 data={"metadata": json.dumps({"files": [{"variant": "baseline"}]})},
                                                 files=[("files", (killed_jtl.name, killed_jtl.read_bytes()))]))
                except httpx.TransportError as exc:
                    replies.append(exc)

            sender = threading.Thread(target=post)
            sender.start()
            with unit_of_work() as watcher:
                wait_until(lambda: watcher.scalar(text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 7402 "
                    "AND NOT granted")) == 1, 60, "the upload to wait for the content's lock to record its file")
            assert killed_blob.is_file()
            api.stop(signal.SIGKILL)
            sender.join(30)
        assert len(replies) == 1 and isinstance(replies[0], httpx.TransportError), replies
    finally:
        api.stop()

    left = set(scratch_dir.glob("upload-*")) - folders_before
    assert len(left) == 1, left   # the killed request's folder, with the file it received
    fresh, busy = (scratch_dir / f"{kind}-{uuid.uuid4().hex[:6]}" for kind in ("upload", "ingest"))
    fresh.mkdir()
    busy.mkdir()
    day_ago = time.time() - 86400 - 60
    for path in [*left, *next(iter(left)).rglob("*"), busy]:
        os.utime(path, (day_ago, day_ago))
    (busy / "being-written").write_bytes(b"x")   # an old folder with a file written now: in use
    os.utime(busy, (day_ago, day_ago))
    api, _ = start_api()   # a restarted API removes what the killed one left
    api.stop()
    assert not any(p.exists() for p in left) and fresh.is_dir() and busy.is_dir()
    shutil.rmtree(fresh)
    shutil.rmtree(busy)

    def unrecorded() -> set[str]:
        with unit_of_work() as session:
            return set(session.scalars(select(UnrecordedBlob.sha256).where(
                UnrecordedBlob.sha256.in_([killed_sha, kept_sha]))))

    def upload_kept() -> httpx.Response:
        return client.post(f"/api/v1/projects/{slug}/runs", headers={**auth, "Idempotency-Key": "kept"},
                           data={"metadata": json.dumps({"files": [{"variant": "baseline"}]})},
                           files=[("files", (kept_jtl.name, kept_jtl.read_bytes()))])

    r = upload_kept()
    assert r.status_code == 202, r.text
    with unit_of_work() as session:
        project_runs = session.scalars(select(Run.slug).join(Project, Project.id == Run.project_id)
                                       .where(Project.slug == slug)).all()
        assert project_runs == [r.json()["run"]]
        assert session.scalar(select(Blob.id).where(Blob.sha256 == killed_sha)) is None
    assert unrecorded() == {killed_sha}
    again = upload_kept()   # a duplicate (the same Idempotency-Key): nothing recorded, its row settled
    assert again.status_code == 200 and again.json()["duplicate"] is True, again.text
    assert unrecorded() == {killed_sha}
    assert killed_blob.is_file() and kept_blob.is_file()
    with unit_of_work() as session:   # the row a killed upload of the kept bytes would have left
        repository.note_unrecorded(session, "killed-upload", [kept_sha])
    assert unrecorded() == {killed_sha, kept_sha}

    sweep()   # within the hour: an upload may still be about to record it
    assert killed_blob.is_file()
    with unit_of_work() as session:   # as if the hour had passed
        session.execute(text("UPDATE unrecorded_blobs SET written_at = now() - interval '61 minutes' "
                             "WHERE sha256 = ANY(:shas)"), {"shas": [killed_sha, kept_sha]})
    sweep()
    assert not killed_blob.exists() and kept_blob.is_file()
    assert unrecorded() == set()
    with unit_of_work() as session:
        assert session.scalar(select(Blob.id).where(Blob.sha256 == kept_sha)) is not None


def test_a_backup_leaves_out_a_file_the_sweeper_removes_while_it_runs_and_refuses_a_corrupt_one(
        infra, tmp_path, monkeypatch):
    """Blobs are listed, then archived one by one: a file no row refers to that beat's sweeper removes in
    between is left out (the backup does not fail), a file whose bytes no longer match its name stops it."""
    import tarfile
    from backup import BackupError, backup

    data = tmp_path / "data"
    contents = {name: f"timeStamp,elapsed\n1,{n}\n".encode() for n, name in enumerate(("kept", "swept", "bad"))}
    paths = {}
    for name, raw in contents.items():
        sha = hashlib.sha256(raw).hexdigest()
        paths[name] = data / "blobs" / sha[:2] / sha
        paths[name].parent.mkdir(parents=True, exist_ok=True)
        paths[name].write_bytes(raw)
    paths["bad"].unlink()
    real_glob = Path.glob

    def glob(self: Path, pattern: str):  # type: ignore[no-untyped-def]
        found = list(real_glob(self, pattern))
        if self == data / "blobs":
            paths["swept"].unlink(missing_ok=True)   # the sweeper, right after the listing
        return iter(found)

    monkeypatch.setattr(Path, "glob", glob)
    manifest = backup(infra["BENCHTRAIL_DATABASE_URL"], data, tmp_path / "a.tar")
    kept_sha = paths["kept"].name
    assert manifest["blobs"] == [{"sha256": kept_sha, "size": len(contents["kept"])}]
    with tarfile.open(tmp_path / "a.tar") as tar:
        assert sorted(tar.getnames()) == sorted(["database.dump", f"blobs/{kept_sha}", "manifest.json"])
        assert tar.extractfile(f"blobs/{kept_sha}").read() == contents["kept"]  # type: ignore[union-attr]
        assert json.load(tar.extractfile("manifest.json")) == manifest  # type: ignore[arg-type]

    paths["bad"].write_bytes(contents["kept"])   # a name whose bytes are another file's
    with pytest.raises(BackupError, match=f"blob {paths['bad']} is corrupt"):
        backup(infra["BENCHTRAIL_DATABASE_URL"], data, tmp_path / "b.tar")
    assert not (tmp_path / "b.tar").exists() and not (tmp_path / "b.tar.part").exists()

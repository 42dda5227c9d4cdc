"""Back up and restore Benchtrail: the database (pg_dump custom format) and the raw uploads (the
content-addressed blobs under BENCHTRAIL_DATA_DIR/blobs) in one tar archive.

  backup.py backup  [ARCHIVE]      (default: .data/backups/benchtrail-<UTC time>.tar)
  backup.py restore ARCHIVE

Both read BENCHTRAIL_DATABASE_URL and BENCHTRAIL_DATA_DIR (`make backup` / `make restore` set them to
`make up`'s stack). The archive holds `database.dump`, `blobs/<sha256>` and `manifest.json`.

Consistency: the database is dumped first (one snapshot), the blobs after. A blob a row refers to is
immutable and never removed, so every blob the dump refers to is in the archive (later ones are harmless
extras). Only an object no row refers to (an upload that failed) may be removed meanwhile, by beat's
sweeper: it is then left out. Each blob is read once, hashed as it is added; the manifest comes last.
A restore replaces the target database's tables (pg_restore --clean) in one transaction and adds
the blobs, checking each one's sha256 against its name.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FORMAT = "benchtrail-backup/1"
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class BackupError(Exception):
    pass


def _pg_bin(name: str) -> str:
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
                        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    if candidates:
        return str(candidates[-1])
    found = shutil.which(name)
    if not found:
        raise BackupError(f"{name} not found (apt-get install postgresql-client)")
    return found


def _libpq(database_url: str) -> tuple[list[str], dict[str, str]]:
    """Connection arguments for pg_dump/pg_restore; the password goes in the environment, never argv."""
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    args = ["-h", url.host or "127.0.0.1", "-p", str(url.port or 5432), "-U", url.username or "postgres",
            "-d", url.database or "postgres"]
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    return args, env


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def backup(database_url: str, data_dir: Path, archive: Path, blobs_in: str | None = None) -> dict:
    """Write ARCHIVE (mode 600); returns its manifest. `blobs_in` (an s3:// bucket and prefix): the raw
    files live in the user's object store, which backs them up itself; the archive holds the database."""
    conn, env = _libpq(database_url)
    archive.parent.mkdir(parents=True, exist_ok=True)
    blob_dir = data_dir / "blobs"
    with tempfile.TemporaryDirectory(prefix="bt-backup-", dir=archive.parent) as tmp:
        dump = Path(tmp) / "database.dump"
        proc = subprocess.run([_pg_bin("pg_dump"), *conn, "--format=custom", "--no-owner", "--no-privileges",
                               "-f", str(dump)], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BackupError(f"pg_dump failed: {proc.stderr.strip()}")
        part = archive.with_name(archive.name + ".part")
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as fh, tarfile.open(fileobj=fh, mode="w") as tar:
                tar.add(dump, arcname="database.dump")
                blobs = [] if blobs_in or not blob_dir.is_dir() else _add_blobs(tar, blob_dir)
                manifest = {"format": FORMAT, "created_at": datetime.now(timezone.utc).isoformat(),
                            "database": "database.dump", "blobs": blobs,
                            **({"blobs_in": blobs_in} if blobs_in else {})}
                data = json.dumps(manifest, indent=1).encode()
                info = tarfile.TarInfo("manifest.json")
                info.size, info.mode = len(data), 0o600
                tar.addfile(info, io.BytesIO(data))
            os.replace(part, archive)
        finally:
            part.unlink(missing_ok=True)
    return manifest


class _Hashing:
    """A file read once: what tarfile copies from it is hashed on the way."""

    def __init__(self, f: io.BufferedReader) -> None:
        self.f, self.hash = f, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.f.read(size)
        self.hash.update(data)
        return data


def _add_blobs(tar: tarfile.TarFile, blob_dir: Path) -> list[dict]:
    blobs = []
    for path in sorted(blob_dir.glob("*/*")):
        if not SHA256.match(path.name) or path.parent.name != path.name[:2]:
            continue  # a .part left by an interrupted write
        try:
            f = path.open("rb")
        except FileNotFoundError:
            continue  # an object no row refers to, removed by the sweeper since the listing
        with f:
            info = tar.gettarinfo(arcname=f"blobs/{path.name}", fileobj=f)
            hashing = _Hashing(f)
            tar.addfile(info, hashing)
        if hashing.hash.hexdigest() != path.name:
            raise BackupError(f"blob {path} is corrupt: its content hashes to {hashing.hash.hexdigest()}")
        blobs.append({"sha256": path.name, "size": info.size})
    return blobs


def restore(archive: Path, database_url: str, data_dir: Path) -> dict:
    """Replace the target database's contents with the archive's and add its blobs; returns the manifest."""
    conn, env = _libpq(database_url)
    blob_dir = data_dir / "blobs"
    with tarfile.open(archive, mode="r") as tar, tempfile.TemporaryDirectory(prefix="bt-restore-") as tmp:
        try:
            manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
        except KeyError:
            raise BackupError(f"{archive} is not a Benchtrail backup (no manifest.json)") from None
        if manifest.get("format") != FORMAT:
            raise BackupError(f"{archive}: unknown backup format {manifest.get('format')!r}")
        dump = Path(tmp) / "database.dump"
        with tar.extractfile("database.dump") as src, dump.open("wb") as dst:  # type: ignore[union-attr]
            shutil.copyfileobj(src, dst)
        # Blobs first: a restored run must never point at a file that is not there.
        for blob in manifest["blobs"]:
            sha = blob["sha256"]
            if not SHA256.match(sha):
                raise BackupError(f"{archive}: bad blob name {sha!r}")
            target = blob_dir / sha[:2] / sha
            if target.exists() and _sha256(target) == sha:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            part = target.with_suffix(".part")
            with tar.extractfile(f"blobs/{sha}") as src, part.open("wb") as dst:  # type: ignore[union-attr]
                shutil.copyfileobj(src, dst)
            if _sha256(part) != sha:
                part.unlink()
                raise BackupError(f"{archive}: blob {sha} does not match its sha256")
            os.replace(part, target)
        proc = subprocess.run([_pg_bin("pg_restore"), *conn, "--clean", "--if-exists", "--no-owner",
                               "--no-privileges", "--single-transaction", "--exit-on-error", str(dump)],
                              env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BackupError(f"pg_restore failed: {proc.stderr.strip()}")
    return manifest


def main() -> int:
    sys.path.insert(0, str(REPO / "backend"))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("backup")
    b.add_argument("archive", nargs="?", type=Path)
    r = sub.add_parser("restore")
    r.add_argument("archive", type=Path)
    args = parser.parse_args()
    database_url, data_dir = os.environ["BENCHTRAIL_DATABASE_URL"], Path(os.environ["BENCHTRAIL_DATA_DIR"])
    blobs_in = None
    if os.environ.get("BENCHTRAIL_STORAGE", "local") == "s3":
        prefix = os.environ.get("BENCHTRAIL_S3_PREFIX", "").strip("/")
        blobs_in = f"s3://{os.environ.get('BENCHTRAIL_S3_BUCKET', '')}/{prefix + '/' if prefix else ''}"
    try:
        if args.cmd == "backup":
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
            archive = args.archive or REPO / ".data" / "backups" / f"benchtrail-{stamp}.tar"
            manifest = backup(database_url, data_dir, archive, blobs_in)
            if blobs_in:
                print(f"backup: {archive} (database only; the raw files stay in {blobs_in}: back up the bucket "
                      f"with its own versioning or replication)")
            else:
                print(f"backup: {archive} (database + {len(manifest['blobs'])} raw file(s))")
        else:
            manifest = restore(args.archive, database_url, data_dir)
            print(f"restore: {args.archive} restored (database + {len(manifest['blobs'])} raw file(s))"
                  + (f"; its raw files are in {manifest['blobs_in']}" if manifest.get("blobs_in") else ""))
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A database made by an earlier release, for upgrade tests (`make up`, the compose stack).

tests/fixtures/upgrade/0018/ holds what release 768a7be (migration 0018) made through its own API: two
projects (one private), 14 runs (JMH, JMeter, hey CSV uploads, and a plan run by its runner), two alerts (one
triaged), an annotation and a plan (tests/fixtures/upgrade/make_fixture.py tells how, and makes it again):

- `backup.tar`: that release's `make backup` archive: `database.dump` (pg_dump custom format, no owner) and
  the raw files (`blobs/<sha256>`), restorable with infra/scripts/backup.py `restore` (what `make restore`
  runs) or, for the database alone, `pg_restore --no-owner --no-privileges -d <db>` of `database.dump`;
- `expected.json`: that release's API answers for each run (the run, its throughput series, its overheads per
  analysed metric) and each project (runs, alerts, annotations, plans), with the admin token of its database.

`assert_unchanged(api_url)` reads the same answers from an upgraded server and fails on the first number,
state or name that differs; fields the newer release added are not compared (it may add, not change).
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import urllib.parse
import urllib.request
from functools import cache
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "upgrade" / "0018"
ARCHIVE = FIXTURE / "backup.tar"
MIGRATION = "0018"


@cache
def expected() -> dict[str, Any]:
    return json.loads((FIXTURE / "expected.json").read_text())


def admin_token() -> str:
    """A site-wide admin token stored (hashed) in the old database: it must still work after the upgrade."""
    return str(expected()["admin_token"])


def extract_database_dump(into: Path) -> Path:
    """`database.dump` of the archive (for a restore of the database alone, e.g. into a container)."""
    with tarfile.open(ARCHIVE) as tar:
        member = tar.getmember("database.dump")
        source = tar.extractfile(member)
        assert source is not None
        target = into / "database.dump"
        target.write_bytes(source.read())
    return target


def _read(api_url: str, path: str, **params: Any) -> bytes:
    query = "?" + urllib.parse.urlencode(params, doseq=True) if params else ""
    req = urllib.request.Request(f"{api_url.rstrip('/')}{path}{query}",
                                 headers={"Authorization": f"Bearer {admin_token()}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 200, (path, r.status)
        return bytes(r.read())


def _get(api_url: str, path: str, **params: Any) -> Any:
    return json.loads(_read(api_url, path, **params))


def _same(old: Any, new: Any, where: str, old_url: str, new_url: str) -> None:
    """`new` holds every value of `old` (URLs compared without their origin, which moved)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), f"{where}: {new!r} is not an object"
        for key, value in old.items():
            assert key in new, f"{where}.{key}: gone after the upgrade"
            _same(value, new[key], f"{where}.{key}", old_url, new_url)
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), f"{where}: {len(old)} items before, {new!r} after"
        for i, (a, b) in enumerate(zip(old, new)):
            _same(a, b, f"{where}[{i}]", old_url, new_url)
    elif isinstance(old, str) and old.startswith(old_url):
        assert isinstance(new, str) and new.startswith(new_url) and new[len(new_url):] == old[len(old_url):], \
            f"{where}: {old!r} before, {new!r} after"
    else:
        assert new == old and type(new) is type(old), f"{where}: {old!r} before, {new!r} after"


def assert_unchanged(api_url: str, public_url: str | None = None, raw_files: bool = True) -> int:
    """Every run of the old database opens on the upgraded server at `api_url` and answers as the old release
    did: its cells, series and overheads to the last digit, its alerts, annotations and plans; with `raw_files`,
    each of its stored files downloads with the sha256 and size the old release recorded (the archive's raw
    files were restored too). `public_url`: the origin the upgraded server puts in permalinks (default
    `api_url`). Returns the runs compared."""
    old, new_url = expected(), (public_url or api_url).rstrip("/")
    for slug, answers in old["runs"].items():
        _same(answers["run"], _get(api_url, f"/api/v1/runs/{slug}"), f"run {slug}", old["url"], new_url)
        for file in answers["run"]["files"] if raw_files else ():
            raw = _read(api_url, file["download_url"])
            assert (hashlib.sha256(raw).hexdigest(), len(raw)) == (file["sha256"], file["size"]), \
                f"run {slug} file {file['filename']}: not the bytes stored before the upgrade"
        _same(answers["series"], _get(api_url, f"/api/v1/runs/{slug}/series", metric="throughput"),
              f"run {slug} series", old["url"], new_url)
        for metric, overheads in answers["overheads"].items():
            _same(overheads, _get(api_url, f"/api/v1/runs/{slug}/overheads", metric=metric),
                  f"run {slug} overheads {metric}", old["url"], new_url)
    for project, answers in old["projects"].items():
        _same(answers["runs"], _get(api_url, f"/api/v1/projects/{project}/runs", per_page=100),
              f"{project} runs", old["url"], new_url)
        for what in ("alerts", "annotations", "plans"):
            _same(answers[what], _get(api_url, f"/api/v1/projects/{project}/{what}"), f"{project} {what}",
                  old["url"], new_url)
    return len(old["runs"])

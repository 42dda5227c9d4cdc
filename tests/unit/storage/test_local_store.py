"""The local raw file store when several requests of one API process store the same content at once."""

from __future__ import annotations

import hashlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchtrail.storage import LocalStore


def test_one_content_stored_by_many_threads_at_once_is_created_once(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    for round_ in range(40):
        content = f"round {round_}\n".encode() * 1000
        sha = hashlib.sha256(content).hexdigest()
        sources = []
        for i in range(8):   # each request has its own received file, as the API's uploads do
            source = tmp_path / f"received-{round_}-{i}"
            source.write_bytes(content)
            sources.append(source)
        start = threading.Barrier(len(sources))

        def put(source: Path) -> bool:
            start.wait()
            return store.put(source, sha)

        with ThreadPoolExecutor(len(sources)) as pool:
            created = list(pool.map(put, sources))
        assert created.count(True) == 1, created   # exactly one call says it created the object
        blob = tmp_path / "store" / "blobs" / sha[:2] / sha
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha
        assert not [p.name for p in blob.parent.iterdir() if p.name.endswith(".part")]   # no temporary file left

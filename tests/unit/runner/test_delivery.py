"""Packaging a runner's outputs for delivery: compressed, checked against their sha256 when re-sent."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import zstandard

from benchtrail_runner import delivery


def outputs(tmp_path: Path) -> list[Path]:
    a = tmp_path / "out" / "a" / "hey.csv"
    b = tmp_path / "out" / "b" / "hey.csv"  # same name as a: every variant's output may be called alike
    for p, n in ((a, 3000), (b, 5000)):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"
                     + "".join(f"0.{i % 97:04d},0,0,0,0,0,200,{i / 1000:.4f}\n" for i in range(n)))
    return [a, b]


def test_package_compresses_every_output_and_records_its_sha256(tmp_path: Path) -> None:
    src = outputs(tmp_path)
    meta = {"files": [{"variant": "a", "format": "hey-csv"}, {"variant": "b", "format": "hey-csv"}]}
    pkg = delivery.package("run1", meta, src, tmp_path / "upload")
    assert len(pkg.files) == 2 and len({p.name for p in pkg.files}) == 2
    manifest = json.loads((tmp_path / "upload" / "upload.json").read_text())
    assert manifest["run"] == "run1" and manifest["metadata"] == meta
    assert manifest["idempotency_key"] == pkg.idempotency_key and pkg.idempotency_key.startswith("runner-run1-")
    for original, packed, entry in zip(src, pkg.files, manifest["files"]):
        assert zstandard.ZstdDecompressor().decompress(packed.read_bytes()) == original.read_bytes()
        assert entry["sha256"] == hashlib.sha256(packed.read_bytes()).hexdigest()
        assert entry["raw_size"] == original.stat().st_size
    assert pkg.raw_bytes == sum(p.stat().st_size for p in src)
    assert pkg.packed_bytes < pkg.raw_bytes / 3
    assert not list((tmp_path / "upload").glob(".*.tmp"))


def test_a_package_is_on_disk_before_its_manifest_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host crash must not leave a manifest naming files whose bytes were never written: each file is
    synced, then the manifest, then renamed, then the folder synced (the real calls are made)."""
    import os

    events: list[str] = []
    real_fsync, real_replace = os.fsync, Path.replace

    def fsync(fd: int) -> None:
        events.append("fsync " + Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        real_fsync(fd)

    def replace(self: Path, target: Path) -> Path:
        events.append(f"rename {self.name} {Path(target).name}")
        return real_replace(self, target)

    monkeypatch.setattr(delivery.os, "fsync", fsync)
    monkeypatch.setattr(Path, "replace", replace)
    delivery.package("run3", {"files": []}, outputs(tmp_path), tmp_path / "upload")
    assert events == ["fsync 000-hey.csv.zst", "fsync 001-hey.csv.zst", "fsync .upload.json.tmp",
                      "rename .upload.json.tmp upload.json", "fsync upload", f"fsync {tmp_path.name}"]


def test_a_kept_package_loads_back_with_the_same_key(tmp_path: Path) -> None:
    pkg = delivery.package("run2", {"files": []}, outputs(tmp_path), tmp_path / "upload")
    again = delivery.Package.load(tmp_path / "upload")
    assert (again.slug, again.idempotency_key, again.files) == ("run2", pkg.idempotency_key, pkg.files)


def test_a_damaged_or_missing_file_is_named(tmp_path: Path) -> None:
    pkg = delivery.package("run3", {"files": []}, outputs(tmp_path), tmp_path / "upload")
    data = bytearray(pkg.files[1].read_bytes())
    data[-1] ^= 0xFF
    pkg.files[1].write_bytes(bytes(data))
    with pytest.raises(ValueError, match=f"{pkg.files[1].name}: sha256 differs"):
        delivery.Package.load(tmp_path / "upload")
    pkg.files[1].unlink()
    with pytest.raises(ValueError, match=f"file '{pkg.files[1].name}' is missing"):
        delivery.Package.load(tmp_path / "upload")


def test_resend_of_a_folder_without_a_package_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert delivery.main([str(tmp_path)]) == 2
    assert f"{tmp_path}: cannot read the package" in capsys.readouterr().err


def test_undelivered_names_the_folder_and_the_command(tmp_path: Path) -> None:
    pkg = delivery.package("run4", {"files": []}, outputs(tmp_path), tmp_path / "upload")
    # Nothing listens on port 9 of loopback: refused at once, no retries (retry_s=0).
    with pytest.raises(delivery.NotDelivered) as caught:
        delivery.send(pkg, "http://127.0.0.1:9", "token", retry_s=0)
    assert caught.value.directory == tmp_path / "upload"
    assert f"python -m benchtrail_runner.delivery {tmp_path / 'upload'}" in str(caught.value)
    assert "ConnectError" in caught.value.why

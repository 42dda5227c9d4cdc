"""Where `make up` keeps its PostgreSQL cluster (infra/scripts/stack.py `cluster_dir`): as root, in the product's
data folder, reached through a link in the project; as a user, in the project; an earlier cluster stays put."""

from __future__ import annotations

import importlib.util
import stat
from pathlib import Path

import pytest

from infra.localstack import REPO

spec = importlib.util.spec_from_file_location("bt_stack_script", REPO / "infra" / "scripts" / "stack.py")
stack = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
spec.loader.exec_module(stack)  # type: ignore[union-attr]


@pytest.fixture()
def var_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    var = tmp_path / "var" / "lib" / "benchtrail"
    monkeypatch.setattr(stack, "VAR_DIR", var)
    monkeypatch.setattr(stack.os, "geteuid", lambda: 0)
    return var


def test_as_root_the_cluster_lives_in_the_products_data_folder(tmp_path: Path, var_dir: Path) -> None:
    project = tmp_path / "root home" / "bench trail"
    state = project / ".data" / "stack"
    assert stack.cluster_dir(state, project, create=False) == state / "pg" and not var_dir.exists()
    link = stack.cluster_dir(state, project, create=True)
    assert link == state / "pg" and link.is_symlink()
    target = link.resolve()
    assert target.parent.parent == var_dir and target.name == "postgres"
    assert target.parent.name.startswith("bench-trail-")   # readable, no spaces
    assert stat.S_IMODE(var_dir.stat().st_mode) == stat.S_IMODE(target.parent.stat().st_mode) == 0o755
    assert str(project) in (target.parent / "PROJECT").read_text()
    # Again: the same place.
    assert stack.cluster_dir(state, project, create=True).resolve() == target
    # Another project folder of the same name gets its own.
    other = tmp_path / "elsewhere" / "bench trail"
    assert stack.cluster_dir(other / ".data" / "stack", other, create=True).resolve() != target


def test_an_earlier_cluster_stays_and_an_empty_leftover_is_replaced(tmp_path: Path, var_dir: Path) -> None:
    kept = tmp_path / "opt" / "benchtrail"
    (kept / ".data" / "stack" / "pg" / "data").mkdir(parents=True)
    (kept / ".data" / "stack" / "pg" / "data" / "PG_VERSION").write_text("15\n")
    assert stack.cluster_dir(kept / ".data" / "stack", kept, create=True) == kept / ".data" / "stack" / "pg"
    assert not (kept / ".data" / "stack" / "pg").is_symlink()
    # A `make up` that stopped because postgres could not enter the home left an empty folder: replaced.
    stopped = tmp_path / "root" / "benchtrail"
    (stopped / ".data" / "stack" / "pg").mkdir(parents=True)
    (stopped / ".data" / "stack" / "pg" / "initdb.log").write_text("")
    assert stack.cluster_dir(stopped / ".data" / "stack", stopped, create=True).is_symlink()


def test_a_user_keeps_the_cluster_in_the_project(tmp_path: Path, var_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stack.os, "geteuid", lambda: 1000)
    project = tmp_path / "home" / "ann" / "benchtrail"
    link = stack.cluster_dir(project / ".data" / "stack", project, create=True)
    assert link == project / ".data" / "stack" / "pg" and not link.is_symlink() and not var_dir.exists()


def test_redis_config_values_may_hold_spaces() -> None:
    assert stack.redis_quoted('/root/my "projects"/a b') == '"/root/my \\"projects\\"/a b"'

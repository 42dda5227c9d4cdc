"""The layers contract forbids an import against the grain: a copy of the backend where `auth` (the lowest layer)
imports `trails` fails it, naming the import, while the real tree passes (`make lint`)."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

from infra.localstack import REPO, VENV_BIN


def _layers_config(tmp: Path) -> Path:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c.get("type") == "layers")
    lines = ["[importlinter]", "root_package = benchtrail", "", "[importlinter:contract:layers]",
             f"name = {layers['name']}", "type = layers", "containers =", *[f"    {c}" for c in layers["containers"]],
             "layers =", *[f"    {layer}" for layer in layers["layers"]],
             "ignore_imports =", *[f"    {i}" for i in layers.get("ignore_imports", [])]]
    config = tmp / "importlinter.ini"
    config.write_text("\n".join(lines) + "\n")
    return config


def _lint(tmp: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "lint-imports"), "--config", str(config), "--no-cache", "--no-logo"],
                          cwd=tmp, env={"PYTHONPATH": str(tmp), "PATH": f"{VENV_BIN}:/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)


def test_an_import_against_the_layers_fails_and_the_tree_passes(tmp_path: Path) -> None:
    shutil.copytree(REPO / "backend" / "benchtrail", tmp_path / "benchtrail",
                    ignore=shutil.ignore_patterns("__pycache__"))
    config = _layers_config(tmp_path)
    clean = _lint(tmp_path, config)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    tokens = tmp_path / "benchtrail" / "auth" / "tokens.py"
    tokens.write_text(tokens.read_text() + "\nimport benchtrail.trails.service  # noqa: E402,F401\n")
    against = _lint(tmp_path, config)
    assert against.returncode != 0
    assert "benchtrail.auth is not allowed to import benchtrail.trails" in against.stdout, against.stdout[-2000:]

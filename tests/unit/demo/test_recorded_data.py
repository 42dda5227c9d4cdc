"""The recorded demo in examples/data/ is what `make up` can upload: each project's plan passes the API's plan
validation, each run's metadata passes the upload's, every file it names is there (and no other), and each run
says how it was recorded. The Go demo target's own tests (the router variants) run here too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
import zstandard
from benchtrail.plans.model import load_plan
from benchtrail.uploads.schemas import UploadMetadata

from infra.localstack import REPO

DATA = REPO / "examples" / "data"
PROJECTS = ("easeagent", "easegress-router", "pts-go")


@pytest.mark.parametrize("project", PROJECTS)
def test_recorded_project_is_loadable(project: str) -> None:
    folder = DATA / project
    info = json.loads((folder / "project.json").read_text())
    assert info["slug"] == project and info["runs"], info
    plan = load_plan((folder / "plan.yaml").read_text())
    assert (folder / "README.md").is_file()
    for run in info["runs"]:
        doc = json.loads((folder / run / "upload.json").read_text())
        meta = UploadMetadata.model_validate(doc["metadata"])
        assert len(doc["files"]) == len(meta.files)
        on_disk = {p.name for p in (folder / run).iterdir()} - {"upload.json", "recording.json"}
        assert on_disk == set(doc["files"]), run
        for name, spec in zip(doc["files"], meta.files, strict=True):
            assert name.endswith(".zst") and spec.variant in {v.name for v in plan.variants}
            with (folder / run / name).open("rb") as fh:   # a whole zstd frame, not a truncated file
                assert zstandard.ZstdDecompressor().stream_reader(fh).read(64)
        recording = json.loads((folder / run / "recording.json").read_text())
        assert recording["recorded_at"] and recording["tools"]
        # The plan as run: the project's plan on the ports its targets were started on (older agent versions
        # with fewer repetitions).
        as_run = load_plan(json.dumps(recording["plan"]))
        assert (as_run.tool, as_run.loads, as_run.order, as_run.scenarios) == \
            (plan.tool, plan.loads, plan.order, plan.scenarios)


def test_live_demo_plans_pass_the_plan_validation() -> None:
    """The plans `demo.py live` posts (make up's background runs): the demo plan and its shortened history, then
    the profile plans."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("demo_script", REPO / "infra" / "scripts" / "demo.py")
    assert spec and spec.loader
    demo = importlib.util.module_from_spec(spec)
    sys.modules["demo_script"] = demo   # its dataclasses look their module up
    try:
        spec.loader.exec_module(demo)
    finally:
        del sys.modules["demo_script"]
    plans = demo.profile_plans()
    assert [project for project, _ in plans] == [demo.LIVE_PROJECT, demo.GO_LIVE_PROJECT]
    java, go = (load_plan(json.dumps(plan)) for _, plan in plans)
    assert all(v.profile is not None for v in (*java.variants, *go.variants))
    assert go.repetitions == 2 and all(load.duration_s == 15 for load in go.loads)
    load_plan((REPO / "examples" / "plans" / "demo-easeagent-quick.yaml").read_text())


def test_demo_target_go_tests() -> None:
    if shutil.which("go") is None:
        pytest.fail("no Go toolchain: infra/scripts/bootstrap.sh --tools installs it")
    done = subprocess.run(["go", "test", "./..."], cwd=REPO / "infra" / "demo" / "target", capture_output=True,
                          text=True, env={**os.environ, "GOFLAGS": "-buildvcs=false"}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr

"""A CI job's view: the one-file client downloaded from the running server (GET /cli/benchtrail.py) into a
clean Python 3.11 virtualenv with nothing installed uploads runs with --wait and gates on them; the GitHub
Action's and the GitLab template's scripts do the same, run exactly as written in action.yml and
ci-templates/benchtrail.gitlab-ci.yml. Cells are checked against csv + numpy (tests/support/jtl.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml

from benchtrail.cli.client import __version__ as CLIENT_VERSION
from infra.localstack import REPO
from tests.support.jtl import independent_cells, write_jtl
from tests.support.pythons import newest, oldest

MAX_CLIENT_BYTES = 5 * 1024 * 1024


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python3 -m venv --without-pip` from the machine's Python 3.11: no package at all."""
    base = Path(sys.base_prefix) / "bin" / "python3"
    venv = tmp_path_factory.mktemp("ci-job") / "venv"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                          text=True, check=True).stdout.split() == ["3", "11"]
    site = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert os.listdir(site) == [], os.listdir(site)
    return python


def job_env(**extra: str) -> dict[str, str]:
    """A CI job's environment: none of this test process's Python settings."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return {**keep, **extra}


def cells_of(run: dict) -> dict[str, dict[tuple[str, int], dict]]:
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l for l in run["loads"]}
    out: dict[str, dict[tuple[str, int], dict]] = {}
    for c in run["cells"]:
        if scenarios[c["scenario_id"]] != "*":
            out.setdefault(variants[c["variant_id"]], {})[(scenarios[c["scenario_id"]],
                                                           int(loads[c["load_id"]]["value"]))] = c
    return out


def by_label(run: dict) -> dict[tuple[str, str, str], dict]:
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l["label"] for l in run["loads"]}
    return {(variants[c["variant_id"]], scenarios[c["scenario_id"]], loads[c["load_id"]]): c for c in run["cells"]
            }


def assert_cells_match(run: dict, files: dict[str, Path]) -> None:
    got = cells_of(run)
    assert set(got) == set(files)
    for name, path in files.items():
        expected = independent_cells(path)
        assert set(got[name]) == set(expected)
        for key, exp in expected.items():
            cell = got[name][key]
            assert (cell["count"], cell["errors"]) == (exp["count"], exp["errors"])
            assert cell["latency_mean"] == pytest.approx(exp["latency_mean"], rel=1e-12)
            assert cell["latency_p75"] == pytest.approx(exp["latency_p75"], rel=1e-3)
            assert cell["latency_p99"] == pytest.approx(exp["latency_p99"], rel=1e-3)
            assert cell["throughput"] == pytest.approx(exp["throughput"], rel=1e-9)


def two_files(folder: Path, seed: int, slowdown: float) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {"baseline": write_jtl(folder / "baseline.jtl", seed=seed),
            "agent": write_jtl(folder / "agent.jtl", seed=seed + 1, slowdown=slowdown)}


def download(python: Path, url: str, into: Path) -> Path:
    """As a CI job does it: with its own Python's urllib, from the server it uploads to."""
    target = into / "benchtrail.py"
    subprocess.run([str(python), "-c", "import sys, urllib.request; urllib.request.urlretrieve(*sys.argv[1:])",
                    f"{url}/cli/benchtrail.py", str(target)], env=job_env(), check=True, timeout=60)
    return target


def test_the_downloaded_client_uploads_waits_and_gates_from_a_clean_venv(live_api, worker, make_project,
                                                                        clean_venv, tmp_path):
    slug, token = make_project()
    script = download(clean_venv, live_api, tmp_path)
    size = script.stat().st_size
    assert 0 < size < MAX_CLIENT_BYTES
    assert script.read_bytes() == (REPO / "backend/benchtrail/cli/client.py").read_bytes()
    # No server dependency can be imported in the job's Python.
    gone = subprocess.run([str(clean_venv), "-c", "import httpx"], env=job_env(), capture_output=True, text=True)
    assert gone.returncode == 1 and "ModuleNotFoundError" in gone.stderr
    # The server serves it with its version and an ETag; a client that has it gets 304.
    with urllib.request.urlopen(f"{live_api}/cli/benchtrail.py") as r:
        assert r.headers["X-Benchtrail-Version"] == re.search(r'__version__ = "([^"]+)"', script.read_text())[1]
        etag = r.headers["ETag"]
    with pytest.raises(urllib.error.HTTPError) as not_modified:
        urllib.request.urlopen(urllib.request.Request(f"{live_api}/cli/benchtrail.py", headers={"If-None-Match": etag}))
    assert not_modified.value.code == 304

    env = job_env(BENCHTRAIL_URL=live_api, BENCHTRAIL_TOKEN=token)

    def client(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(clean_venv), str(script), *args], env=env, capture_output=True, text=True,
                              timeout=180)

    def upload(files: dict[str, Path], *extra: str) -> subprocess.CompletedProcess[str]:
        return client("upload", "--project", slug, *(a for n, p in files.items() for a in ("--variant", f"{n}={p}")),
                      "--wait", "--json", *extra)

    def run_of(slug_: str) -> dict:
        req = urllib.request.Request(f"{live_api}/api/v1/runs/{slug_}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req) as r:
            return json.load(r)

    # The reference run; its cells are those csv + numpy compute from the files.
    first = two_files(tmp_path / "first", seed=11, slowdown=1.0)
    done = upload(first, "--agent-version", "1.0.0")
    assert done.returncode == 0, done.stderr
    reference = json.loads(done.stdout)
    assert (reference["status"], reference["is_valid"], reference["alerts"]) == ("completed", True, [])
    assert_cells_match(run_of(reference["run"]), first)

    # A good run: its agent costs what the baseline does (p75 within 25 ms, the noise of 400 samples); the gates pass.
    good_files = two_files(tmp_path / "good", seed=21, slowdown=1.0)
    done = upload(good_files, "--agent-version", "1.1.0", "--criterion", "latency_p75 < 25;overhead")
    assert done.returncode == 0, done.stderr
    good = json.loads(done.stdout)
    assert [c["ok"] for c in good["criteria"]] == [True] * len(good["criteria"]) and good["criteria"]
    assert_cells_match(run_of(good["run"]), good_files)
    done = client("compare", reference["run"], good["run"], "--metric", "latency_p75", "--fail-on-worse")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "latency_p75" in done.stdout and "(worse)" not in done.stdout

    # A worse run: its agent is 1.5 times slower. The overhead criterion fails (7), and compared with the
    # reference every agent cell is worse (5).
    worse_files = two_files(tmp_path / "worse", seed=31, slowdown=1.5)
    done = upload(worse_files, "--agent-version", "1.2.0", "--criterion", "latency_p75 < 25;overhead")
    assert done.returncode == 7, done.stdout + done.stderr
    worse = json.loads(done.stdout)
    assert worse["status"] == "completed" and any(c["ok"] is False for c in worse["criteria"])
    assert "criterion failed: overhead of latency_p75 < 25" in done.stderr
    assert_cells_match(run_of(worse["run"]), worse_files)
    done = client("compare", reference["run"], worse["run"], "--metric", "latency_p75", "--fail-on-worse", "--json")
    assert done.returncode == 5, done.stdout + done.stderr
    rows = json.loads(done.stdout)["items"]
    flagged = {(r["b_variant"], r["cell"]["scenario"], r["cell"]["load_label"]) for r in rows if r["result"]["worse"]}
    agent_cells = {(r["b_variant"], r["cell"]["scenario"], r["cell"]["load_label"]) for r in rows
                   if r["b_variant"] == "agent"}
    # Two labels and their whole ('*') at three thread counts.
    assert len(agent_cells) == 9 and agent_cells <= flagged
    # The differences are the cells' own: b − a of each pair, as the API stores them.
    ref_cells, worse_cells = by_label(run_of(reference["run"])), by_label(run_of(worse["run"]))
    assert len(rows) == 18
    for r in rows:
        a = ref_cells[(r["a_variant"], r["cell"]["scenario"], r["cell"]["load_label"])]["latency_p75"]
        b = worse_cells[(r["b_variant"], r["cell"]["scenario"], r["cell"]["load_label"])]["latency_p75"]
        assert (r["result"]["reference"], r["result"]["variant"]) == (pytest.approx(a), pytest.approx(b))


def _github_env(action: dict, inputs: dict[str, str], github: dict[str, str]) -> dict[str, str]:
    """The step's `env:` as GitHub evaluates it: `${{ inputs.X }}` is the input given or its default, whose
    own `${{ github.X || github.Y }}` reads the workflow's context."""
    def context(expression: str) -> str:
        for name in expression.split("||"):
            value = github.get(name.strip().removeprefix("github."), "")
            if value:
                return value
        return ""

    def default(name: str) -> str:
        value = str(action["inputs"][name].get("default", ""))
        return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", lambda m: context(m[1]), value)

    [step] = action["runs"]["steps"]
    env = {}
    for key, value in step["env"].items():
        m = re.fullmatch(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", value)
        assert m, f"{key}: the test evaluates `${{{{ inputs.NAME }}}}` only, not {value!r}"
        name = m[1]
        assert name in action["inputs"], name
        env[key] = inputs[name] if name in inputs else default(name)
    return env


def test_the_github_action_uploads_and_gates(live_api, worker, make_project, tmp_path):
    """action.yml's own step, run as a runner does (bash -e -o pipefail on the script), with the newest Python on
    the machine: the outputs name the run; compared with it, a worse run fails the job (5)."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    [step] = action["runs"]["steps"]
    (step_file := tmp_path / "step.sh").write_text(step["run"])
    slug, token = make_project()
    version, python = newest()
    github = {"sha": "0123456789abcdef0123456789abcdef01234567", "ref_name": "main", "head_ref": ""}

    def run_action(files: dict[str, Path], **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        outputs = tmp_path / f"outputs-{len(list(tmp_path.glob('outputs-*')))}"
        outputs.touch()
        given = {"url": live_api, "token": token, "project": slug, "python": str(python),
                 "files": "\n".join(f"{n}={p}" for n, p in files.items()) + "\n", **inputs}
        env = job_env(**_github_env(action, given, github), RUNNER_TEMP=str(tmp_path), GITHUB_OUTPUT=str(outputs))
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(step_file)], env=env,
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
        return done, dict(line.split("=", 1) for line in outputs.read_text().splitlines())

    done, out = run_action(two_files(tmp_path / "one", seed=41, slowdown=1.0), **{"agent-version": "2.0.0"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"benchtrail.py {CLIENT_VERSION}" in done.stdout and out["permalink"].endswith(out["run"])
    first = out["run"]
    req = urllib.request.Request(f"{live_api}/api/v1/runs/{first}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req) as r:
        run = json.load(r)
    assert (run["commit"], run["branch"], run["agent_version"]) == (github["sha"], "main", "2.0.0")
    assert "overhead against the reference" in done.stdout   # `show` printed the run for the job's log

    worse_files = two_files(tmp_path / "two", seed=51, slowdown=1.5)
    done, out = run_action(worse_files, **{"agent-version": "2.1.0", "compare-with": first,
                                           "compare-metrics": "latency_p75"})
    assert done.returncode == 5, done.stdout + done.stderr
    assert out["run"] != first and "worse: agent / " in done.stderr
    assert version >= (3, 9)


def test_the_gitlab_template_uploads_and_gates(live_api, worker, make_project, tmp_path):
    """The template's hidden job script, with its variables and the job's predefined ones, run by bash with the
    oldest Python on the machine (3.9): a failed criterion fails the job (7); the run is still recorded, with the
    commit and branch GitLab gave, and handed on in benchtrail.env."""
    template = yaml.safe_load((REPO / "ci-templates/benchtrail.gitlab-ci.yml").read_text())
    job = template[".benchtrail-upload"]
    slug, token = make_project()
    version, python = oldest()
    files = two_files(tmp_path / "files", seed=61, slowdown=1.5)
    variables = {**{k: str(v) for k, v in job["variables"].items()},
                 "BENCHTRAIL_URL": live_api, "BENCHTRAIL_TOKEN": token, "BENCHTRAIL_PROJECT": slug,
                 "BENCHTRAIL_FILES": "".join(f"{n}={p}\n" for n, p in files.items()),
                 "BENCHTRAIL_CRITERIA": "latency_p75 < 25;overhead\nerror_rate < 5\n",
                 "BENCHTRAIL_AGENT_VERSION": "3.0.0", "BENCHTRAIL_ARGS": "--environment gitlab-ci --label ci=gitlab",
                 "BENCHTRAIL_PYTHON": str(python),
                 "CI_COMMIT_SHA": "fedcba9876543210fedcba9876543210fedcba98", "CI_COMMIT_REF_NAME": "release/3.0"}
    (script := tmp_path / "job.sh").write_text("\n".join(job["script"]))
    done = subprocess.run(["bash", "-eo", "pipefail", str(script)], env=job_env(**variables), capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 7, done.stdout + done.stderr
    assert "criterion failed: overhead of latency_p75 < 25" in done.stderr and "criterion failed: error_rate" not in done.stderr
    assert f"benchtrail.py {CLIENT_VERSION}" in done.stdout and version >= (3, 9)
    [line] = (tmp_path / "benchtrail.env").read_text().splitlines()
    run_slug = line.removeprefix("BENCHTRAIL_RUN=")
    req = urllib.request.Request(f"{live_api}/api/v1/runs/{run_slug}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req) as r:
        run = json.load(r)
    assert (run["commit"], run["branch"], run["agent_version"]) == (variables["CI_COMMIT_SHA"], "release/3.0", "3.0.0")
    assert run["environment"] == "gitlab-ci" and run["labels"] == {"ci": "gitlab"}
    assert_cells_match(run, files)

"""Record the demo's raw outputs with Benchtrail's own runner against the demo targets on this machine.

    .venv/bin/python infra/demo/record.py easeagent [easegress-router pts-go ...]

For each demo project (a folder of examples/data/ with a plan.yaml and a project.json): start its targets
(infra/demo/start-*.sh, on free ports), run its plan with the runner's own code (`execute_plan`, then
`results_upload`: exactly the files and metadata a runner sends, the targets' resources included), and write
one folder per run under examples/data/<project>/<run>/:

    upload.json       the upload's metadata for the public API (POST /api/v1/projects/{slug}/runs) and the
                      names of its files, in the metadata's order
    NNN-<name>.zst    each raw output, zstd-compressed (the API takes .zst uploads as they are)
    recording.json    how it was recorded: date, host, tool versions, the plan as run (with the ports used),
                      the runner's step manifest and load-generator CPU

`make up` (infra/scripts/demo.py) uploads these folders; it never records. Recording takes long (the EaseAgent
demo about 25 minutes) and needs the tools (infra/tools/install.sh). As root it runs at priority -20, like
`make up`'s runner and the demo services, so other work on a shared machine decides less of its timings.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
import zstandard

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "backend"), str(REPO / "worker" / "runner")]

from benchtrail.plans.model import load_plan  # noqa: E402
from benchtrail_runner.execute import PlanResult, execute_plan  # noqa: E402
from benchtrail_runner.report import host_environment, results_upload  # noqa: E402
from benchtrail_runner.tools import Progress, tools_dir  # noqa: E402
from infra.localstack import free_port_run  # noqa: E402

DATA = REPO / "examples" / "data"
DEMO = REPO / "infra" / "demo"
ZSTD_LEVEL = 19
# Every recorded run has this environment, so its trails compare across the runs (and never with a live run's).
ENVIRONMENT_NAME = "demo recording host (2 shared cores)"


def log(msg: str) -> None:
    print(f"record: {msg}", flush=True)


def _retarget(plan: dict[str, Any], ports: dict[str, int], extra: Callable[[dict[str, Any]], None] | None = None
              ) -> dict[str, Any]:
    """The plan with each variant's target (and its /metrics URL) on the port its service was started on."""
    plan = json.loads(json.dumps(plan))
    for v in plan["variants"]:
        url = f"http://127.0.0.1:{ports[v['name']]}"
        v["target"] = url
        if v.get("resources", {}).get("url"):
            v["resources"]["url"] = f"{url}/metrics"
    if extra:
        extra(plan)
    return plan


@dataclass
class Recording:
    """One run to record: its folder name, the plan as run, the upload's own metadata."""

    name: str
    plan: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    before: Callable[[], None] | None = None     # e.g. restart the agent service with this run's version


# ------------------------------------------------------------------------------------- targets

def _env(run_dir: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "BENCHTRAIL_TOOLS_DIR": str(tools_dir()), "DEMO_RUN_DIR": str(run_dir), **extra}


@contextlib.contextmanager
def easeagent(run_dir: Path, plan: dict[str, Any], versions: list[str]) -> Iterator[list[Recording]]:
    base = free_port_run(3)
    env = _env(run_dir, DEMO_BASELINE_PORT=str(base), DEMO_AGENT_PORT=str(base + 1), DEMO_OTLP_PORT=str(base + 2),
               DEMO_DB_US="2000", DEMO_AGENT_VERSION=versions[0])
    try:
        subprocess.run([str(DEMO / "start-java.sh")], env=env, check=True)
        ports = {"baseline": base, "agent": base + 1}
        recordings = []
        for i, version in enumerate(versions):
            newest = i == len(versions) - 1
            # The older versions run 2 of the newest's 3 repetitions: the same cells and trails, smaller files.
            as_run = _retarget(plan, ports, None if newest else lambda p: p.update(repetitions=2))
            restart = None if i == 0 else (lambda v=version: subprocess.run(
                [str(DEMO / "start-java.sh"), "agent", v], env=env, check=True))
            recordings.append(Recording(f"agent-{version}", as_run, {
                "agent_version": version, "app_version": "benchtrail demo service (pet-clinic-like)",
                "labels": {"demo": "recorded", "otel_javaagent": version}}, restart))
        yield recordings
    finally:
        subprocess.run([str(DEMO / "stop-java.sh")], env=env, check=False)


@contextlib.contextmanager
def easegress_router(run_dir: Path, plan: dict[str, Any], versions: list[str]) -> Iterator[list[Recording]]:
    base = free_port_run(3)
    env = _env(run_dir, DEMO_ROUTER_PORT=str(base))
    try:
        subprocess.run([str(DEMO / "start-router.sh")], env=env, check=True)
        ports = {"ordered-v1": base, "ordered-v2": base + 1, "radixtree": base + 2}
        yield [Recording("routers", _retarget(plan, ports), {
            "app_version": "benchtrail demo target, router mode", "labels": {"demo": "recorded"}})]
    finally:
        subprocess.run([str(DEMO / "stop-router.sh")], env=env, check=False)


@contextlib.contextmanager
def pts_go(run_dir: Path, plan: dict[str, Any], versions: list[str]) -> Iterator[list[Recording]]:
    base = free_port_run(5)
    env = _env(run_dir, DEMO_PTS_PORT=str(base))
    try:
        subprocess.run([str(DEMO / "start-go-pts.sh")], env=env, check=True)
        ports = {"no-agent": base, "agent": base + 2}

        def processes(p: dict[str, Any]) -> None:
            for v in p["variants"]:
                consumer = ports[v["name"]]
                v["processes"] = [{"name": "consumer", "port": consumer},
                                  {"name": "provider", "command": f"-addr 127.0.0.1:{consumer + 1}"}]

        yield [Recording("pair", _retarget(plan, ports, processes), {
            "agent_version": "demo-trace", "app_version": "benchtrail demo target, consumer -> provider",
            "labels": {"demo": "recorded"}})]
    finally:
        subprocess.run([str(DEMO / "stop-go-pts.sh")], env=env, check=False)


DEMOS = {"easeagent": easeagent, "easegress-router": easegress_router, "pts-go": pts_go}


# ----------------------------------------------------------------------------------- recording

def tool_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    versions = tools_dir() / "versions.txt"
    if versions.exists():
        for line in versions.read_text().splitlines():
            k, _, v = line.partition("=")
            if k:
                out[k] = v
    for name, argv in (("java", ["java", "-version"]), ("go", ["go", "version"])):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            out[name] = (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError, IndexError):
            pass
    return out


def _commit() -> dict[str, Any]:
    """The checkout the recording ran from, and whether it had uncommitted changes."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    status = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True)
    return {"sha": head.stdout.strip() or None, "uncommitted_changes": bool(status.stdout.strip())}


def _progress(p: Progress) -> None:
    if p.percent == 100.0:
        rate = f", {p.achieved_rate:.0f} req/s" if p.achieved_rate else ""
        log(f"  step {p.step + 1}: {p.step_name}: {p.requests} requests, {p.errors} errors{rate}")


def _manifest(result: PlanResult) -> dict[str, Any]:
    """The runner's step manifest without the resource points (those are in the uploaded resources file)."""
    manifest = result.manifest()
    for step in manifest["steps"]:  # type: ignore[union-attr]
        for res in step.get("resources", {}).values():
            res.pop("points", None)
        for out in step.get("outputs", []):
            out["path"] = Path(out["path"]).name
    return manifest


def wait_for_quiet(below: float | None, wait_s: float) -> None:
    """On a shared machine, other jobs decide the timings: wait (up to `wait_s`) until the 1-minute load
    average is under `below`; recording.json keeps the load averages either way."""
    if below is None:
        return
    deadline = time.monotonic() + wait_s
    while (load := os.getloadavg()[0]) >= below and time.monotonic() < deadline:
        log(f"load average {load:.1f} >= {below:g}: waiting for a quieter machine "
            f"({(deadline - time.monotonic()) / 60:.0f} min left)")
        time.sleep(30)


def record(project: str, rec: Recording, out: Path) -> None:
    plan = load_plan(json.dumps(rec.plan))   # the API's validation: schema and rules
    work = Path(tempfile.mkdtemp(prefix=f"record-{project}-"))
    try:
        log(f"{project}/{rec.name}: {plan.name}")
        started = time.time()
        load_start = os.getloadavg()
        result = execute_plan(plan, work, progress=_progress)
        meta, paths = results_upload(result, work, plan)
        env = host_environment()
        env["name"] = ENVIRONMENT_NAME
        env["attributes"] = {**env.get("attributes", {}), "recorded_by": "infra/demo/record.py (runner code)"}
        first_ms = min(s.run.started_ms for s in result.steps if s.run is not None)
        upload = {
            "tool": plan.tool,
            "environment": env, "reference": plan.reference.name if plan.reference else None,
            "started_at": datetime.fromtimestamp(first_ms / 1000, timezone.utc).isoformat(),
            "files": meta["files"], "criteria": [c.model_dump(exclude_defaults=True) for c in plan.criteria],
            "file_checks": True, **rec.meta,
        }
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        names = []
        compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, threads=-1)
        raw = packed = 0
        for i, src in enumerate(paths):
            name = f"{i:03d}-{src.name}.zst"
            data = src.read_bytes()
            (out / name).write_bytes(compressor.compress(data))
            raw += len(data)
            packed += (out / name).stat().st_size
            names.append(name)
        (out / "upload.json").write_text(json.dumps({"metadata": upload, "files": names}, indent=1) + "\n")
        (out / "recording.json").write_text(json.dumps({
            "recorded_at": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
            "took_s": round(time.time() - started, 1), "commit": _commit(),
            "host": {"os": f"{platform.system()} {platform.release()}", "cpus": os.cpu_count(),
                     "load_average_start": load_start, "load_average_end": os.getloadavg(), "nice": os.nice(0)},
            "tools": tool_versions(), "plan": rec.plan, "loadgen": meta["loadgen"], "steps": _manifest(result),
        }, indent=1, default=str) + "\n")
        log(f"{project}/{rec.name}: {len(names)} files, {raw / 2**20:.1f} MB raw, {packed / 2**20:.2f} MB "
            f"zstd -{ZSTD_LEVEL}, in {time.time() - started:.0f} s -> {out.relative_to(REPO)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="+", choices=sorted(DEMOS))
    parser.add_argument("--only", help="record only this run (folder name, e.g. agent-2.10.0)")
    parser.add_argument("--quiet-below", type=float, default=None,
                        help="before each run, wait until the 1-minute load average is under this")
    parser.add_argument("--quiet-wait-min", type=float, default=60,
                        help="how long to wait for that at most, then record anyway (default 60)")
    args = parser.parse_args()
    if os.geteuid() == 0:
        os.nice(int(os.environ.get("DEMO_NICE", "-20")) - os.nice(0))
    versions = [v.strip() for v in (DEMO / "agent-versions.txt").read_text().splitlines()
                if v.strip() and not v.startswith("#")]
    for project in args.projects:
        folder = DATA / project
        plan = yaml.safe_load((folder / "plan.yaml").read_text())
        with tempfile.TemporaryDirectory(prefix=f"record-{project}-run-") as run_dir, \
                DEMOS[project](Path(run_dir), plan, versions) as recordings:
            for rec in recordings:
                if args.only and rec.name != args.only:
                    continue
                wait_for_quiet(args.quiet_below, args.quiet_wait_min * 60)
                if rec.before is not None:
                    rec.before()
                record(project, rec, folder / rec.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

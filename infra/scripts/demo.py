"""The demo data of `make up`, through the public API exactly as a CI job sends it (idempotent).

    demo.py recorded --url URL     upload the recorded demo and wait until every run is ingested: the X-Ray JMH
                                   history, the OpenTelemetry Go SDK benchmark history (demo_go_bench.py) and one
                                   project per recorded seed shape (examples/data/)
    demo.py live --url URL         start the Java demo services and run the live demo plan on the local
                                   runner, once per agent version, then the profile plans (Java with
                                   async-profiler, the Go pair with pprof); skipped when a completed live run exists

The token comes from BENCHTRAIL_TOKEN (or --token): a command line is visible to every user of the host.
`make up` runs `recorded` before it prints the URL and `live` in the background afterwards
(infra/scripts/stack.py). What each project shows and how it was recorded: docs/how-to/demo.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "backend"))

import yaml  # noqa: E402

from benchtrail_runner.client import ApiError, Client  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo_go_bench import load_go_bench  # noqa: E402

DATA = REPO / "examples" / "data"
XRAY = DATA / "aws-xray-java-agent"
XRAY_VERSIONS = ["2.7.x", "2.8.x", "2.9.x", "2.18.x", "2.21.x", "2.21.0"]
XRAY_VARIANTS = ["no-instrumentation", "sdk-instrumentation", "auto-instrumentation"]
M5 = {"name": "m5.xlarge", "cpus": 4, "memory_mb": 16384, "instance_type": "m5.xlarge", "os": "Amazon Linux 2",
      "runtime": "OpenJDK 8"}
# Recorded by infra/demo/record.py, in the order `make up` loads them.
RECORDED = ("easeagent", "easegress-router", "pts-go")
LIVE_PROJECT = "easeagent-demo"
GO_LIVE_PROJECT = "go-tracing-demo"
PLANS = REPO / "examples" / "plans"


def log(msg: str) -> None:
    print(f"demo: {msg}", flush=True)


def ensure_project(client: Client, slug: str, name: str, description: str) -> None:
    try:
        client.post("/api/v1/projects", {"slug": slug, "name": name, "description": description})
        log(f"project {slug} created")
    except ApiError as exc:
        if exc.status != 409:
            raise


def upload(client: Client, project: str, key: str, meta: dict, files: list[Path]) -> str:
    accepted = client.upload(project, json.dumps(meta), files, idempotency_key=key)
    return accepted["run"]


def load_xray(client: Client, prefix: str = "") -> list[str]:
    slug = f"{prefix}aws-xray-java-agent"
    ensure_project(client, slug, "AWS X-Ray Java agent",
                   "JMH latency of common scenarios: no instrumentation vs X-Ray SDK vs X-Ray agent")
    runs = []
    for version in XRAY_VERSIONS:
        files = [XRAY / f"aws-xray-java-agent_{version}_{variant}.txt" for variant in XRAY_VARIANTS]
        meta = {"agent_version": version, "environment": M5, "reference": "no-instrumentation",
                "files": [{"variant": v, "format": "jmh-text"} for v in XRAY_VARIANTS]}
        runs.append(upload(client, slug, f"demo-xray-{version}", meta, files))
    return runs


@dataclass(frozen=True)
class RecordedRun:
    """One folder of a recorded project: the upload's metadata and its files, in the metadata's order."""

    project: str
    name: str
    folder: Path
    metadata: dict
    files: list[Path]

    @property
    def key(self) -> str:
        """The Idempotency-Key: the same recording is one run however often it is loaded; a new recording of
        the run (other bytes) is a run of its own."""
        digest = hashlib.sha256((self.folder / "upload.json").read_bytes()).hexdigest()[:16]
        return f"demo-{self.name}-{digest}"


def recorded_project(name: str) -> tuple[dict, list[RecordedRun]]:
    """project.json of examples/data/<name> and its runs in upload order."""
    folder = DATA / name
    project = json.loads((folder / "project.json").read_text())
    runs = []
    for run in project["runs"]:
        doc = json.loads((folder / run / "upload.json").read_text())
        runs.append(RecordedRun(name, run, folder / run, doc["metadata"], [folder / run / f for f in doc["files"]]))
    return project, runs


def load_recorded(client: Client, prefix: str = "", timeout: float = 600) -> list[str]:
    """Every recorded project (the X-Ray and OpenTelemetry Go SDK histories first), each project's runs uploaded in
    order; a run is uploaded once the one before it of its project is ingested, so each run's analysis sees the
    runs before it, as with a release stream. Returns every run's slug (not waited for: see `wait_all`)."""
    runs = load_xray(client, prefix) + load_go_bench(client, prefix)
    pending: list[tuple[str, list[RecordedRun]]] = []
    for name in RECORDED:
        project, recorded = recorded_project(name)
        slug = prefix + project["slug"]
        ensure_project(client, slug, project["name"], project["description"])
        if recorded:
            pending.append((slug, recorded))
    # The first run of every project goes at once; a project's next run after its previous one is ingested.
    last: dict[str, str] = {}
    while pending:
        for slug, recorded in list(pending):
            if slug in last:
                client.wait_for_run(last[slug], timeout=timeout)
            run = recorded.pop(0)
            last[slug] = upload(client, slug, run.key, run.metadata, run.files)
            runs.append(last[slug])
            if not recorded:
                pending.remove((slug, recorded))
    return runs


def wait_all(client: Client, runs: list[str], timeout: float = 600) -> int:
    """Wait for every run to end; the number that did not complete."""
    failed = 0
    for slug in runs:
        run = client.wait_for_run(slug, timeout=timeout)
        if run["status"] != "completed":
            failed += 1
            print(f"demo: run {slug} {run['status']}: {run.get('status_detail')}", file=sys.stderr)
    return failed


# ------------------------------------------------------------------------------------------- live

def agent_versions() -> list[str]:
    lines = (REPO / "infra" / "demo" / "agent-versions.txt").read_text().splitlines()
    return [v.strip() for v in lines if v.strip() and not v.startswith("#")]


def post_plan(client: Client, plan: dict, project: str = LIVE_PROJECT) -> str:
    r = client.http.post(f"/api/v1/projects/{project}/plans", content=json.dumps(plan),
                         headers={"Content-Type": "application/json"})
    return client._check(r)["name"]


def profile_plans() -> list[tuple[str, dict]]:
    """The live profile runs, (project, plan): where the agent's CPU goes. The Java services with async-profiler
    (examples/plans/demo-otel-profile.yaml, the agent at the newest version), then the Go consumer -> provider
    pair with pprof (examples/plans/pts-go-consumer-provider.yaml, shortened to 2 repetitions of 15 s)."""
    java = yaml.safe_load((PLANS / "demo-otel-profile.yaml").read_text())
    go = yaml.safe_load((PLANS / "pts-go-consumer-provider.yaml").read_text())
    go = {**go, "pool": "local", "repetitions": 2, "warmup_s": 5,
          "loads": [{**load, "duration_s": 15} for load in go["loads"]],
          "description": "The PTS consumer -> provider pair, CPU-profiled with pprof (the live demo's shortened plan)."}
    return [(LIVE_PROJECT, java), (GO_LIVE_PROJECT, go)]


def run_profile_demo(client: Client, version: str) -> list[str]:
    """Each profile plan once, one after the other (the Go pair started first, stopped by `make down`)."""
    subprocess.run([str(REPO / "infra" / "demo" / "start-go-pts.sh")], check=True)
    ensure_project(client, GO_LIVE_PROJECT, "Go service: tracing overhead, profiled",
                   "Live demo run by Benchtrail itself: a constant 1,000 req/s to a Go consumer -> provider pair "
                   "without and with tracing, both CPU-profiled with pprof")
    slugs = []
    for project, plan in profile_plans():
        name = post_plan(client, plan, project)
        body: dict = {"labels": {"demo": "make-up", "profile": "yes"}}
        if project == LIVE_PROJECT:   # the Java agent's version; the Go pair's tracing has none
            body["agent_version"] = version
        run = client.post(f"/api/v1/projects/{project}/plans/{name}/runs", body)
        log(f"live profile run {run['slug']} ({project}, plan '{name}') on the local runner")
        done = client.wait_for_run(run["slug"], timeout=900)
        log(f"run {run['slug']} {done['status']}")
        slugs.append(run["slug"])
    return slugs


def run_live_demo(client: Client) -> list[str]:
    """Real plans on the local runner: hey against the Java demo without and with the OpenTelemetry
    agent, once per agent version (oldest first, the agent service restarted with each), so History
    and alerts open on real data. The newest version runs the whole demo plan; the older ones 3 of its
    repetitions (the same trails, in less than half the time)."""
    plan = yaml.safe_load((REPO / "examples" / "plans" / "demo-easeagent-quick.yaml").read_text())
    history = {**plan, "name": f"{plan['name']} history", "repetitions": 3,
               "description": "The demo plan with 3 repetitions, for older agent versions."}
    versions = agent_versions()
    slugs = []
    for version in versions:
        name = post_plan(client, plan if version == versions[-1] else history)
        subprocess.run([str(REPO / "infra" / "demo" / "start-java.sh"), "agent", version], check=True)
        run = client.post(f"/api/v1/projects/{LIVE_PROJECT}/plans/{name}/runs",
                          {"agent_version": version, "labels": {"demo": "make-up"}})
        log(f"live run {run['slug']} (agent {version}, plan '{name}') on the local runner")
        done = client.wait_for_run(run["slug"], timeout=600)   # one at a time: the agent is restarted next
        log(f"run {run['slug']} {done['status']}")
        slugs.append(run["slug"])
    return slugs


def live(client: Client) -> int:
    """The Java demo services (baseline, agent, trace sink), then the live runs unless they were made."""
    subprocess.run([str(REPO / "infra" / "demo" / "start-java.sh")], check=True)
    ensure_project(client, LIVE_PROJECT, "Java service: OpenTelemetry agent overhead",
                   "Live demo run by Benchtrail itself: hey with one connection, one endpoint per step, baseline vs "
                   "the OpenTelemetry Java agent exporting spans over OTLP, interleaved repetitions")
    if client.get(f"/api/v1/projects/{LIVE_PROJECT}/runs", status="completed")["total"]:
        log(f"{LIVE_PROJECT} has completed runs: no new live run")
        return 0
    runs = run_live_demo(client)
    runs += run_profile_demo(client, agent_versions()[-1])
    failed = wait_all(client, runs)
    log(f"{len(runs) - failed} of {len(runs)} live runs completed")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("recorded", "live"))
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", default=os.environ.get("BENCHTRAIL_TOKEN"),
                        help="admin token (default: $BENCHTRAIL_TOKEN)")
    parser.add_argument("--prefix", default="", help="prefix of the recorded projects' slugs (tests load the demo "
                                                     "next to other projects)")
    args = parser.parse_args()
    if not args.token:
        parser.error("no token: set BENCHTRAIL_TOKEN")
    client = Client(args.url, args.token, retry_timeout=60)
    if args.mode == "live":
        return live(client)
    started = time.monotonic()
    runs = load_recorded(client, args.prefix)
    failed = wait_all(client, runs)
    log(f"{len(runs) - failed} of {len(runs)} recorded runs ready in {time.monotonic() - started:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

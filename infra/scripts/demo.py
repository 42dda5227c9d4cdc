"""Load demo data through the public API, exactly as a CI job would (idempotent)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "backend"))

import yaml  # noqa: E402

from benchtrail_runner.client import ApiError, Client  # noqa: E402

XRAY = REPO / "examples" / "data" / "aws-xray-java-agent"
XRAY_VERSIONS = ["2.7.x", "2.8.x", "2.9.x", "2.18.x", "2.21.x", "2.21.0"]
XRAY_VARIANTS = ["no-instrumentation", "sdk-instrumentation", "auto-instrumentation"]
M5 = {"name": "m5.xlarge", "cpus": 4, "memory_mb": 16384, "instance_type": "m5.xlarge", "os": "Amazon Linux 2",
      "runtime": "OpenJDK 8"}


def ensure_project(client: Client, slug: str, name: str, description: str) -> None:
    try:
        client.post("/api/v1/projects", {"slug": slug, "name": name, "description": description})
        print(f"demo: project {slug} created")
    except ApiError as exc:
        if exc.status != 409:
            raise


def upload(client: Client, project: str, key: str, meta: dict, files: list[Path]) -> str:
    import json

    accepted = client.upload(project, json.dumps(meta), files, idempotency_key=key)
    return accepted["run"]


def load_xray(client: Client) -> list[str]:
    ensure_project(client, "aws-xray-java-agent", "AWS X-Ray Java agent",
                   "JMH latency of common scenarios: no instrumentation vs X-Ray SDK vs X-Ray agent")
    runs = []
    for version in XRAY_VERSIONS:
        files = [XRAY / f"aws-xray-java-agent_{version}_{variant}.txt" for variant in XRAY_VARIANTS]
        meta = {"agent_version": version, "environment": M5, "reference": "no-instrumentation",
                "files": [{"variant": v, "format": "jmh-text"} for v in XRAY_VARIANTS]}
        runs.append(upload(client, "aws-xray-java-agent", f"demo-xray-{version}", meta, files))
    return runs


def agent_versions() -> list[str]:
    lines = (REPO / "infra" / "demo" / "agent-versions.txt").read_text().splitlines()
    return [v.strip() for v in lines if v.strip() and not v.startswith("#")]


def post_plan(client: Client, plan: dict) -> str:
    r = client.http.post("/api/v1/projects/easeagent-demo/plans", content=json.dumps(plan),
                         headers={"Content-Type": "application/json"})
    return client._check(r)["name"]


def run_live_demo(client: Client) -> list[str]:
    """Real plans on the local runner: hey against the Java demo without and with the OpenTelemetry
    agent, once per agent version (oldest first, the agent service restarted with each), so History
    and alerts open on real data. The newest version runs the whole demo plan; the older ones 3 of its
    repetitions (the same trails, in less than half the time)."""
    ensure_project(client, "easeagent-demo", "Java service: OpenTelemetry agent overhead",
                   "Live demo run by Benchtrail itself: hey with one connection, one endpoint per step, baseline vs "
                   "the OpenTelemetry Java agent exporting spans over OTLP, interleaved repetitions")
    plan = yaml.safe_load((REPO / "examples" / "plans" / "demo-easeagent-quick.yaml").read_text())
    history = {**plan, "name": f"{plan['name']} history", "repetitions": 3,
               "description": "The demo plan with 3 repetitions, for older agent versions."}
    versions = agent_versions()
    slugs = []
    for version in versions:
        name = post_plan(client, plan if version == versions[-1] else history)
        subprocess.run([str(REPO / "infra" / "demo" / "start-java.sh"), "agent", version], check=True)
        run = client.post(f"/api/v1/projects/easeagent-demo/plans/{name}/runs",
                          {"agent_version": version, "labels": {"demo": "make-up"}})
        print(f"demo: live run {run['slug']} (agent {version}, plan '{name}') on the local runner", flush=True)
        done = client.wait_for_run(run["slug"], timeout=600)   # one at a time: the agent is restarted next
        print(f"demo: run {run['slug']} {done['status']}", flush=True)
        slugs.append(run["slug"])
    return slugs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    client = Client(args.url, args.token)
    runs = load_xray(client)
    existing = client.get("/api/v1/projects/easeagent-demo/runs", status="completed") \
        if _exists(client, "easeagent-demo") else {"total": 0}
    if existing["total"] == 0:
        runs += run_live_demo(client)
    failed = 0
    for slug in runs:
        run = client.wait_for_run(slug, timeout=600)
        if run["status"] != "completed":
            failed += 1
            print(f"demo: run {slug} {run['status']}: {run.get('status_detail')}", file=sys.stderr)
    print(f"demo: {len(runs) - failed} of {len(runs)} runs ready")
    return 1 if failed else 0


def _exists(client: Client, slug: str) -> bool:
    try:
        client.get(f"/api/v1/projects/{slug}")
        return True
    except ApiError as exc:
        if exc.status == 404:
            return False
        raise


if __name__ == "__main__":
    sys.exit(main())

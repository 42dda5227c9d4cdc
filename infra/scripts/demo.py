"""Load demo data through the public API, exactly as a CI job would (idempotent)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "backend"))

from benchtrail.cli.client import ApiError, Client  # noqa: E402

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


def run_live_demo(client: Client) -> str:
    """A real plan on the local runner: JMeter against the Java demo, without and with the agent."""
    ensure_project(client, "easeagent-demo", "Java service: OpenTelemetry agent overhead",
                   "Live demo run by Benchtrail itself: JMeter thread groups 10/20/50, baseline vs agent")
    plan_text = (REPO / "examples" / "plans" / "demo-easeagent-quick.yaml").read_text()
    r = client.http.post("/api/v1/projects/easeagent-demo/plans", content=plan_text,
                         headers={"Content-Type": "application/yaml"})
    plan = client._check(r)
    run = client.post(f"/api/v1/projects/easeagent-demo/plans/{plan['name']}/runs",
                      {"agent_version": "2.10.0", "labels": {"demo": "make-up"}})
    print(f"demo: live run {run['slug']} started on the local runner (about 2 minutes)", flush=True)
    return run["slug"]


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
        runs.append(run_live_demo(client))
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

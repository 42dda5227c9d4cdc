"""Demo data: a real Go benchmark history, `examples/go-otel-bench` (the OpenTelemetry Go trace SDK's span
start/end, with and without a recording exporter, run here against five released versions of
go.opentelemetry.io/otel/sdk with `go test -bench -benchmem -count 5`), uploaded through the public API as a CI
job would: one run per SDK version, so that its History shows ns/op, B/op, allocs/op and spans/s across versions.
Idempotent (one Idempotency-Key per version).

    from demo_go_bench import load_go_bench     # infra/scripts/demo.py
    load_go_bench(client)                        # a benchtrail_runner.client.Client with an admin token

or on its own: `.venv/bin/python infra/scripts/demo_go_bench.py --url http://127.0.0.1:8400 --token ADMIN`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "backend"))
sys.path.insert(0, str(REPO / "worker" / "runner"))

from benchtrail_runner.client import ApiError, Client  # noqa: E402

RESULTS = REPO / "examples" / "go-otel-bench" / "results"
PROJECT = "otel-go-sdk-bench"
ENVIRONMENT = {"name": "benchtrail-dev (2 vCPU, shared)", "cpus": 2, "os": "Linux", "runtime": "Go"}


def versions() -> list[tuple[str, Path]]:
    """(SDK version, its output) in version order."""
    found = [(m.group(1), p) for p in RESULTS.glob("otel-sdk-v*.txt")
             if (m := re.fullmatch(r"otel-sdk-(v[\d.]+)\.txt", p.name))]
    return sorted(found, key=lambda vp: tuple(int(x) for x in vp[0][1:].split(".")))


def load_go_bench(client: Client, prefix: str = "") -> list[str]:
    """Upload every version's output as a run of project `otel-go-sdk-bench` (its slug after `prefix`); returns
    the run slugs."""
    project = prefix + PROJECT
    try:
        client.post("/api/v1/projects", {"slug": project, "name": "OpenTelemetry Go SDK benchmarks",
                                         "description": "go test -bench of span start/end in the OpenTelemetry "
                                                        "Go trace SDK, across its released versions"})
    except ApiError as exc:
        if exc.status != 409:
            raise
    runs = []
    for version, path in versions():
        meta = {"agent_version": version, "environment": ENVIRONMENT, "tool": "go",
                "labels": {"module": "go.opentelemetry.io/otel/sdk"}, "files": [{"variant": "sdk", "format": "go-bench"}]}
        accepted = client.upload(project, json.dumps(meta), [path], idempotency_key=f"demo-go-otel-{version}")
        runs.append(accepted["run"])
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8400")
    ap.add_argument("--token", required=True)
    args = ap.parse_args()
    for slug in load_go_bench(Client(args.url, args.token)):
        print(f"demo: go bench run {slug}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

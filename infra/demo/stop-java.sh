#!/usr/bin/env bash
# Stops what start-java.sh started (baseline, agent, trace sink), by their recorded PIDs only.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN="${DEMO_RUN_DIR:-${BENCHTRAIL_TOOLS_DIR:-$(cd "$HERE/../.." && pwd)/.tools}/run}"
# shellcheck source=infra/demo/stop.sh
. "$HERE/stop.sh"
for name in baseline agent sink; do
    stop "$name"
done
rm -f "$RUN/demo-agent.version"

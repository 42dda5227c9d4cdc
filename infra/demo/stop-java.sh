#!/usr/bin/env bash
# Stops what start-java.sh started (baseline, agent, trace sink), by their recorded PIDs only.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN="${DEMO_RUN_DIR:-${BENCHTRAIL_TOOLS_DIR:-$(cd "$HERE/../.." && pwd)/.tools}/run}"
for name in baseline agent sink; do
    f="$RUN/demo-$name.pid"
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$f"
done
rm -f "$RUN/demo-agent.version"

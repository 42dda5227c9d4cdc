#!/usr/bin/env bash
# Stops what start-router.sh started, by recorded PID only.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS="${BENCHTRAIL_TOOLS_DIR:-$(cd "$HERE/../.." && pwd)/.tools}"
RUN="${DEMO_RUN_DIR:-$TOOLS/run}"
# shellcheck source=infra/demo/stop.sh
. "$HERE/stop.sh"
for name in router-ordered-v1 router-ordered-v2 router-radixtree; do
    stop "$name"
done

#!/usr/bin/env bash
# Starts the Easegress router benchmark's set-up (seeds/easegress-router-benchmark.md): the Go demo target in
# router mode, once per routing variant, each with three tables of 10,000 routes (static, prefix, regexp; see
# infra/demo/target/router.go):
#   ordered-v1  $DEMO_ROUTER_PORT+0   the rules in order, first match wins
#   ordered-v2  $DEMO_ROUTER_PORT+1   the same ordered scan, each rule compiled into a matcher beforehand
#   radixtree   $DEMO_ROUTER_PORT+2   a radix tree of the route paths
# DEMO_ROUTER_PORT defaults to 10080 (examples/plans/easegress-hey.yaml uses those ports); DEMO_GO_TARGET is the
# binary (default $BENCHTRAIL_TOOLS_DIR/bin/benchtrail-demo-target, built by infra/demo/build.sh). As root the
# routers run at priority $DEMO_NICE (default -20), like the other demo services. PIDs and logs go to $DEMO_RUN_DIR
# (default $BENCHTRAIL_TOOLS_DIR/run/). Stop with infra/demo/stop-router.sh. Everything binds 127.0.0.1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS="${BENCHTRAIL_TOOLS_DIR:-$(cd "$HERE/../.." && pwd)/.tools}"
BIN="${DEMO_GO_TARGET:-$TOOLS/bin/benchtrail-demo-target}"
RUN="${DEMO_RUN_DIR:-$TOOLS/run}"
P="${DEMO_ROUTER_PORT:-10080}"
if [ "$(id -u)" -eq 0 ]; then NICE="${DEMO_NICE:--20}"; else NICE="${DEMO_NICE:-0}"; fi
mkdir -p "$RUN"
[ -x "$BIN" ] || { echo "$BIN is missing: run infra/demo/build.sh" >&2; exit 1; }

spawn() {   # variant port
    local name="router-$1" port="$2"
    if [ -f "$RUN/demo-$name.pid" ] && kill -0 "$(cat "$RUN/demo-$name.pid")" 2>/dev/null; then
        echo "demo-$name already running (pid $(cat "$RUN/demo-$name.pid"))" >&2; return 0
    fi
    setsid "$HERE/at-priority.sh" "$NICE" "$BIN" -addr "127.0.0.1:$port" -router "$1" >"$RUN/demo-$name.log" 2>&1 < /dev/null &
    echo $! >"$RUN/demo-$name.pid"
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "demo-$name did not listen on $port (see $RUN/demo-$name.log)" >&2
    exit 1
}

spawn ordered-v1 "$P"
spawn ordered-v2 $((P + 1))
spawn radixtree $((P + 2))
echo "routers: ordered-v1 127.0.0.1:$P, ordered-v2 127.0.0.1:$((P + 1)), radixtree 127.0.0.1:$((P + 2))"

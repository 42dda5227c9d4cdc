#!/usr/bin/env bash
# Starts the PTS seeds' set-up (loongsuite-go-agent, opentelemetry-go-auto-instrumentation reports):
# the Go demo target as a consumer -> provider pair (the consumer's GET /echo calls the provider's
# /echo per request), twice, plus the trace sink:
#   no-agent   consumer $DEMO_PTS_PORT+0 -> provider $DEMO_PTS_PORT+1   no instrumentation
#   agent      consumer $DEMO_PTS_PORT+2 -> provider $DEMO_PTS_PORT+3   -trace: a server span per request,
#              a client span per relayed call, W3C traceparent propagation, spans batched and
#              exported as OTLP/HTTP JSON to the sink (Go has no agent to attach at run time; the
#              seeds' agents instrument at compile time, the demo target carries its own tracing)
#   sink       $DEMO_PTS_PORT+4 (counts spans: GET /v1/traces/stats)
# DEMO_PTS_PORT defaults to 18093 (examples/plans/pts-go-consumer-provider.yaml uses those ports);
# DEMO_GO_TARGET is the binary (default $BENCHTRAIL_TOOLS_DIR/bin/benchtrail-demo-target, built by
# infra/demo/build.sh). Each process runs alone (GOMAXPROCS=${DEMO_GOMAXPROCS:-1}, like the seeds' 1C
# pods). PIDs and logs go to $DEMO_RUN_DIR (default $BENCHTRAIL_TOOLS_DIR/run/).
# Every process serves its CPU profile at /debug/pprof/profile (-pprof), for plans with `profile: {runtime: go}`.
# Stop with infra/demo/stop-go-pts.sh. Everything binds 127.0.0.1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS="${BENCHTRAIL_TOOLS_DIR:-$(cd "$HERE/../.." && pwd)/.tools}"
BIN="${DEMO_GO_TARGET:-$TOOLS/bin/benchtrail-demo-target}"
RUN="${DEMO_RUN_DIR:-$TOOLS/run}"
P="${DEMO_PTS_PORT:-18093}"
export GOMAXPROCS="${DEMO_GOMAXPROCS:-1}"
mkdir -p "$RUN"
[ -x "$BIN" ] || { echo "$BIN is missing: run infra/demo/build.sh" >&2; exit 1; }

spawn() {   # name port args...
    local name="$1" port="$2"; shift 2
    "$BIN" -addr "127.0.0.1:$port" "$@" >"$RUN/demo-$name.log" 2>&1 &
    echo $! >"$RUN/demo-$name.pid"
    for _ in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "demo-$name did not listen on $port (see $RUN/demo-$name.log)" >&2
    exit 1
}

SINK="http://127.0.0.1:$((P + 4))"
spawn pts-sink $((P + 4))
spawn pts-provider-noagent $((P + 1)) -service provider -pprof
spawn pts-consumer-noagent $P -service consumer -upstream "http://127.0.0.1:$((P + 1))" -pprof
spawn pts-provider-agent $((P + 3)) -service provider -trace "$SINK" -pprof
spawn pts-consumer-agent $((P + 2)) -service consumer -upstream "http://127.0.0.1:$((P + 3))" -trace "$SINK" -pprof
echo "PTS pair: no-agent 127.0.0.1:$P -> :$((P + 1)), agent 127.0.0.1:$((P + 2)) -> :$((P + 3)), sink $SINK"

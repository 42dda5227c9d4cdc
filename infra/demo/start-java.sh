#!/usr/bin/env bash
# Starts the Java demo service twice, for an agent-overhead bench, and the trace sink its agent exports to:
#   baseline on $DEMO_BASELINE_PORT (default 18081), no agent
#   agent    on $DEMO_AGENT_PORT    (default 18082), -javaagent:opentelemetry-javaagent-<version>.jar
#   sink     on $DEMO_OTLP_PORT     (default 18083), the Go demo target's OTLP/HTTP receiver:
#            POST /v1/traces counts the spans, GET /v1/traces/stats shows the counts
# The agent exports every span for real: batch span processor, OTLP http/protobuf to the sink
# (DEMO_OTEL_EXPORTER=none creates spans and sends nothing; =logging writes them to the agent's log).
# Both services run with TCP_NODELAY (-Dsun.net.httpserver.nodelay=true; DEMO_NODELAY=false shows the
# ~40 ms delayed-ACK plateau instead). Everything binds 127.0.0.1.
#
#   start-java.sh                    sink, baseline and agent (the agent with $DEMO_AGENT_VERSION,
#                                    default: the newest in infra/demo/agent-versions.txt)
#   start-java.sh agent <version>    (re)start only the agent service, with that agent version
#   start-java.sh warm               warm up the running baseline and agent services ($DEMO_WARMUP_S)
# Every started service is warmed up first ($DEMO_WARMUP_S, below; 0 starts them cold, to warm later).
#
# PIDs and logs go to $DEMO_RUN_DIR (default $BENCHTRAIL_TOOLS_DIR/run/). Stop with infra/demo/stop-java.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS="${BENCHTRAIL_TOOLS_DIR:-$(cd "$HERE/../.." && pwd)/.tools}"
JAVA_DIR="$TOOLS/demo-java"
RUN="${DEMO_RUN_DIR:-$TOOLS/run}"
BASELINE_PORT="${DEMO_BASELINE_PORT:-18081}"
AGENT_PORT="${DEMO_AGENT_PORT:-18082}"
OTLP_PORT="${DEMO_OTLP_PORT:-18083}"
EXPORTER="${DEMO_OTEL_EXPORTER:-otlp}"
NODELAY="${DEMO_NODELAY:-true}"
HEAP="${DEMO_HEAP:-256m}"
# CPU time (µs) each request spends outside any span, as a real service's parsing and rendering do: without
# it the service answers in ~0.1 ms, one connection makes the 10-span endpoint's spans faster than the agent
# exports them, and the queue overflows on a fast machine (below). 150 µs halves the request rate.
WORK_US="${DEMO_WORK_US:-150}"
# Time (µs) each database call of the service waits for its answer, blocked inside its db.* span (1 call for the owner
# endpoint, 5 for the vets endpoint): 0 by default (the live demo measures the agent's own cost at ~0.1 ms per request);
# the recorded EaseAgent demo used 2000 so that its latencies (about 2 and 10 ms) show at JMeter's 1 ms resolution.
DB_US="${DEMO_DB_US:-0}"
# Scheduling priority of the demo processes (services and sink): on a shared machine other work would otherwise
# decide their latencies (a wake-up waits for a core behind everyone else's jobs). -20 when root, for both
# variants alike; `make up` runs its runner (and so the load tool) at the same priority. Unprivileged: unchanged.
if [ "$(id -u)" -eq 0 ]; then NICE="${DEMO_NICE:--20}"; else NICE="${DEMO_NICE:-0}"; fi
# After a start, every started service is warmed up with hey on both endpoints (2 connections each) for
# $DEMO_WARMUP_S seconds (default 20; 0: none): a freshly started JVM with the agent is several times slower
# than a warm one for its first minute on 2 busy cores (measured: +1100% mean latency in the first 3 s step,
# +100..300% in the next ones), and a plan's own short warm-up at one connection does not get it there.
WARMUP_S="${DEMO_WARMUP_S:-20}"
# The batch span processor's queue and batch, large enough that the agent exports every span: at its defaults
# (queue 2048, batch 512) a fast machine makes the 10-span endpoint's spans faster than 512-span batches leave,
# the queue overflows and the dropped spans cost the agent almost nothing (measured: 68% of the 10-span
# endpoint's spans dropped at one connection). 65,536 spans of ~1 kB fit the 256 MB heap.
BSP=(-Dotel.bsp.max.queue.size=${DEMO_BSP_QUEUE:-65536} -Dotel.bsp.max.export.batch.size=${DEMO_BSP_BATCH:-4096})
AGENT_VERSION="${DEMO_AGENT_VERSION:-$(grep -v '^#' "$HERE/agent-versions.txt" | grep . | tail -n 1)}"
mkdir -p "$RUN"

[ -f "$JAVA_DIR/demo-service.jar" ] || { echo "run infra/tools/install.sh demo first" >&2; exit 1; }
CP="$JAVA_DIR/demo-service.jar:$JAVA_DIR/lib/*"

alive() { [ -f "$RUN/demo-$1.pid" ] && kill -0 "$(cat "$RUN/demo-$1.pid")" 2>/dev/null; }

# shellcheck source=infra/demo/stop.sh
. "$HERE/stop.sh"

spawn() {   # name command...
    local name="$1"; shift
    if alive "$name"; then
        echo "demo-$name already running (pid $(cat "$RUN/demo-$name.pid"))" >&2; return
    fi
    setsid "$HERE/at-priority.sh" "$NICE" "$@" > "$RUN/demo-$name.log" 2>&1 < /dev/null &
    echo $! > "$RUN/demo-$name.pid"
}

java_service() {   # name port extra-jvm-args...
    local name="$1" port="$2"; shift 2
    spawn "$name" java -Xms"$HEAP" -Xmx"$HEAP" -Dsun.net.httpserver.nodelay="$NODELAY" -Ddemo.work.us="$WORK_US" -Ddemo.db.us="$DB_US" "$@" -cp "$CP" \
        dev.benchtrail.demo.DemoService "$port" 127.0.0.1
}

start_agent() {   # version
    local jar="$JAVA_DIR/opentelemetry-javaagent-$1.jar"
    [ -f "$jar" ] || { echo "no agent $1 in $JAVA_DIR (versions: infra/demo/agent-versions.txt; run infra/tools/install.sh demo)" >&2; exit 1; }
    echo "$1" > "$RUN/demo-agent.version"
    java_service agent "$AGENT_PORT" -javaagent:"$jar" \
        -Dotel.service.name=benchtrail-demo -Dotel.traces.exporter="$EXPORTER" \
        -Dotel.exporter.otlp.protocol=http/protobuf -Dotel.exporter.otlp.endpoint="http://127.0.0.1:$OTLP_PORT" \
        -Dotel.traces.sampler=always_on "${BSP[@]}" -Dotel.metrics.exporter=none -Dotel.logs.exporter=none
}

warm() {   # port...: JIT-compile each service (and the agent's instrumentation) before anything measures it
    [ "$WARMUP_S" != 0 ] && command -v hey >/dev/null || return 0
    local port path pids=()
    for port in "$@"; do
        for path in /api/gateway/owners/2 /api/vet/vets; do
            nice -n "$NICE" hey -z "${WARMUP_S}s" -c 2 "http://127.0.0.1:$port$path" > /dev/null 2>&1 &
            pids+=($!)
        done
    done
    wait "${pids[@]}"
}

wait_for() {   # url: a JVM with the agent takes over 30 s to start on 2 busy cores; give it 2 minutes
    for _ in $(seq 1 1200); do
        curl -fsS "$1" >/dev/null 2>&1 && return
        sleep 0.1
    done
    curl -fsS "$1" >/dev/null || { echo "$1 did not answer; see $RUN" >&2; exit 1; }
}

if [ "${1:-}" = warm ]; then
    warm "$BASELINE_PORT" "$AGENT_PORT"
    exit 0
fi

if [ "${1:-}" = agent ]; then
    [ -n "${2:-}" ] || { echo "usage: start-java.sh agent <version>" >&2; exit 2; }
    stop agent
    start_agent "$2"
    wait_for "http://127.0.0.1:$AGENT_PORT/health"   # the agent needs a few seconds to instrument
    warm "$AGENT_PORT"
    echo "agent $2 http://127.0.0.1:$AGENT_PORT pid $(cat "$RUN/demo-agent.pid")"
    exit 0
fi

[ -x "$TOOLS/bin/benchtrail-demo-target" ] || { echo "run infra/tools/install.sh demo first" >&2; exit 1; }
spawn sink "$TOOLS/bin/benchtrail-demo-target" -addr "127.0.0.1:$OTLP_PORT"
wait_for "http://127.0.0.1:$OTLP_PORT/v1/traces/stats"
java_service baseline "$BASELINE_PORT"
start_agent "$AGENT_VERSION"
wait_for "http://127.0.0.1:$BASELINE_PORT/health"
wait_for "http://127.0.0.1:$AGENT_PORT/health"
warm "$BASELINE_PORT" "$AGENT_PORT"
echo "baseline http://127.0.0.1:$BASELINE_PORT pid $(cat "$RUN/demo-baseline.pid")"
echo "agent    http://127.0.0.1:$AGENT_PORT pid $(cat "$RUN/demo-agent.pid") (OpenTelemetry agent $AGENT_VERSION, exporter $EXPORTER)"
echo "sink     http://127.0.0.1:$OTLP_PORT/v1/traces pid $(cat "$RUN/demo-sink.pid")"

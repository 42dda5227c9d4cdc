#!/usr/bin/env bash
# Starts the Java demo service twice, for an agent-overhead bench:
#   baseline on $DEMO_BASELINE_PORT (default 18081), no agent
#   agent    on $DEMO_AGENT_PORT    (default 18082), -javaagent:opentelemetry-javaagent.jar
# Both bind 127.0.0.1. The agent's exporter is `none` (spans are created, nothing is sent);
# DEMO_OTEL_EXPORTER=logging writes spans to the agent's log file instead. Nothing leaves loopback.
# PIDs and logs go to $BENCHTRAIL_TOOLS_DIR/run/. Stop with infra/demo/stop-java.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS="${BENCHTRAIL_TOOLS_DIR:-$(cd "$HERE/../.." && pwd)/.tools}"
JAVA_DIR="$TOOLS/demo-java"
RUN="${DEMO_RUN_DIR:-$TOOLS/run}"
BASELINE_PORT="${DEMO_BASELINE_PORT:-18081}"
AGENT_PORT="${DEMO_AGENT_PORT:-18082}"
EXPORTER="${DEMO_OTEL_EXPORTER:-none}"
HEAP="${DEMO_HEAP:-256m}"
mkdir -p "$RUN"

[ -f "$JAVA_DIR/demo-service.jar" ] || { echo "run infra/tools/install.sh demo first" >&2; exit 1; }
CP="$JAVA_DIR/demo-service.jar:$JAVA_DIR/lib/*"

start() {   # name port extra-jvm-args...
    local name="$1" port="$2"; shift 2
    if [ -f "$RUN/demo-$name.pid" ] && kill -0 "$(cat "$RUN/demo-$name.pid")" 2>/dev/null; then
        echo "demo-$name already running (pid $(cat "$RUN/demo-$name.pid"))" >&2; return
    fi
    setsid java -Xms"$HEAP" -Xmx"$HEAP" "$@" -cp "$CP" dev.benchtrail.demo.DemoService "$port" 127.0.0.1 \
        > "$RUN/demo-$name.log" 2>&1 < /dev/null &
    echo $! > "$RUN/demo-$name.pid"
}

start baseline "$BASELINE_PORT"
start agent "$AGENT_PORT" -javaagent:"$JAVA_DIR/opentelemetry-javaagent.jar" \
    -Dotel.service.name=benchtrail-demo -Dotel.traces.exporter="$EXPORTER" \
    -Dotel.metrics.exporter=none -Dotel.logs.exporter=none

for port in "$BASELINE_PORT" "$AGENT_PORT"; do   # the agent needs a few seconds to instrument
    for _ in $(seq 1 300); do
        curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
        sleep 0.1
    done
    curl -fsS "http://127.0.0.1:$port/health" >/dev/null || { echo "demo on port $port did not start; see $RUN" >&2; exit 1; }
done
echo "baseline http://127.0.0.1:$BASELINE_PORT pid $(cat "$RUN/demo-baseline.pid")"
echo "agent    http://127.0.0.1:$AGENT_PORT pid $(cat "$RUN/demo-agent.pid")"

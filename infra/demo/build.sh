#!/usr/bin/env bash
# Builds the demo targets into $BENCHTRAIL_TOOLS_DIR (default <repo>/.tools):
#   bin/benchtrail-demo-target   Go stdlib HTTP target (/ok /slow /echo /static/<md5> /users/<name>/<i>)
#   demo-java/demo-service.jar   JDK HttpServer service with @WithSpan spans and /metrics
#   demo-java/lib/*.jar          @WithSpan annotation + OpenTelemetry API (compile and class path)
#   demo-java/opentelemetry-javaagent-<v>.jar  every version in infra/demo/agent-versions.txt
#   demo-java/opentelemetry-javaagent.jar      -> the newest of them
#   async-profiler/libasyncProfiler.so         async-profiler (Maven Central tools.profiler:async-profiler), the
#                                              CPU profiler a plan's `profile: {runtime: jvm, profiler: async-profiler}` loads
# Idempotent: rebuilds only what is older than its sources.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TOOLS="${BENCHTRAIL_TOOLS_DIR:-$REPO/.tools}"
OTEL_INSTRUMENTATION_VERSION=2.10.0   # opentelemetry-java-instrumentation (agent + annotations)
OTEL_API_VERSION=1.44.1               # the API that instrumentation release was built against
ASYNC_PROFILER_VERSION=3.0            # tools.profiler:async-profiler (its jar carries the native library)
mkdir -p "$TOOLS/bin" "$TOOLS/demo-java/lib"

log() { printf '[demo] %s\n' "$*" >&2; }

newer_than() {   # true when any file under $1 is newer than $2 (or $2 is missing)
    [ ! -e "$2" ] || [ -n "$(find "$1" -newer "$2" -type f -print -quit)" ]
}

if newer_than "$HERE/target" "$TOOLS/bin/benchtrail-demo-target"; then
    (cd "$HERE/target" && GOFLAGS=-buildvcs=false go build -trimpath -o "$TOOLS/bin/benchtrail-demo-target.tmp" .)
    mv "$TOOLS/bin/benchtrail-demo-target.tmp" "$TOOLS/bin/benchtrail-demo-target"
    log "built bin/benchtrail-demo-target"
fi

fetch() {   # groupId:artifactId:version -> demo-java/<dir>, from Maven Central via the local repository
    local coords="$1" dir="$2" artifact version
    artifact=$(echo "$coords" | cut -d: -f2); version=$(echo "$coords" | cut -d: -f3)
    if [ ! -f "$dir/$artifact-$version.jar" ]; then
        (cd "$(mktemp -d)" && mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="$coords" -DoutputDirectory="$dir" >&2)
        log "fetched $coords"
    fi
}

JAVA_DIR="$TOOLS/demo-java"
fetch "io.opentelemetry.instrumentation:opentelemetry-instrumentation-annotations:$OTEL_INSTRUMENTATION_VERSION" "$JAVA_DIR/lib"
fetch "io.opentelemetry:opentelemetry-api:$OTEL_API_VERSION" "$JAVA_DIR/lib"
fetch "io.opentelemetry:opentelemetry-context:$OTEL_API_VERSION" "$JAVA_DIR/lib"
# The annotations jar above works with every 2.x agent: the agent instruments @WithSpan by name.
AGENT_VERSIONS=$(grep -v '^#' "$HERE/agent-versions.txt" | grep .)
for v in $AGENT_VERSIONS; do
    fetch "io.opentelemetry.javaagent:opentelemetry-javaagent:$v" "$JAVA_DIR"
done
ln -sf "opentelemetry-javaagent-$(echo "$AGENT_VERSIONS" | tail -n 1).jar" "$JAVA_DIR/opentelemetry-javaagent.jar"

if [ ! -f "$TOOLS/async-profiler/libasyncProfiler.so" ] && [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]; then
    fetch "tools.profiler:async-profiler:$ASYNC_PROFILER_VERSION" "$TOOLS/async-profiler"
    (cd "$TOOLS/async-profiler" && unzip -o -q -j "async-profiler-$ASYNC_PROFILER_VERSION.jar" linux-x64/libasyncProfiler.so)
    log "unpacked async-profiler/libasyncProfiler.so"
fi

if newer_than "$HERE/java/src" "$JAVA_DIR/demo-service.jar"; then
    classes=$(mktemp -d)
    javac --release 17 -cp "$JAVA_DIR/lib/*" -d "$classes" $(find "$HERE/java/src" -name '*.java')
    jar --create --file "$JAVA_DIR/demo-service.jar.tmp" -C "$classes" .
    mv "$JAVA_DIR/demo-service.jar.tmp" "$JAVA_DIR/demo-service.jar"
    rm -rf "$classes"
    log "built demo-java/demo-service.jar"
fi

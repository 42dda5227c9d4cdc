#!/usr/bin/env bash
# Installs the load tools and demo targets Benchtrail's runner uses. Idempotent: a rerun finds
# every piece in place and returns in about a second.
#
#   infra/tools/install.sh                 # everything: apt hey wrk, jmeter, k6, demo
#   infra/tools/install.sh jmeter k6       # only some components (apt = hey and wrk)
#
# Everything except the apt packages goes into $BENCHTRAIL_TOOLS_DIR (default <repo>/.tools):
#   bin/hey, bin/wrk -> apt (/usr/bin), bin/k6, bin/jmeter (wrapper), bin/benchtrail-demo-target,
#   jmeter-5.6.3/ (JMeter home), demo-java/ (service jar, @WithSpan jars, OpenTelemetry Java agent)
# and versions.txt records what is installed. Network: Debian apt, Maven Central, Go module proxy.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="${BENCHTRAIL_TOOLS_DIR:-$REPO/.tools}"
JMETER_VERSION=5.6.3
K6_VERSION=v1.4.2
mkdir -p "$TOOLS/bin"
TOOLS="$(cd "$TOOLS" && pwd)"

log() { printf '[install] %s\n' "$*" >&2; }
stamp() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(stamp)" 'BEGIN { printf "%.1f", b - a }'; }

record_version() {   # name, version: one line per component in versions.txt
    local f="$TOOLS/versions.txt"
    touch "$f"
    grep -v "^$1=" "$f" > "$f.tmp" || true
    echo "$1=$2" >> "$f.tmp"
    sort "$f.tmp" > "$f" && rm -f "$f.tmp"
}

install_apt() {   # apt packages among hey, wrk (default both), linked into $TOOLS/bin
    local wanted=("$@") missing=()
    [ ${#wanted[@]} -eq 0 ] && wanted=(hey wrk)
    for p in "${wanted[@]}"; do command -v "$p" >/dev/null || missing+=("$p"); done
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" -ne 0 ]; then
            log "need root to apt-get install ${missing[*]}"; exit 1
        fi
        local t; t=$(stamp)
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        log "apt ${missing[*]}: $(elapsed "$t") s"
    fi
    for p in "${wanted[@]}"; do
        ln -sf "$(command -v "$p")" "$TOOLS/bin/$p"
        record_version "$p" "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo unknown)"
    done
}

need() {   # command, what provides it
    command -v "$1" >/dev/null || { log "needs $1 ($2)"; exit 1; }
}

# JMeter 5.6.3 assembled from Maven Central (Apache ships no tarball there). Chosen over Debian's
# 2.13 because 2.13 needs an XStream classpath fix on bookworm, cannot load JMX files saved by
# current JMeter, and exits 0 on a missing plan.
install_jmeter() {
    local home="$TOOLS/jmeter-$JMETER_VERSION"
    if [ -f "$home/.complete" ]; then
        log "jmeter $JMETER_VERSION present"
    else
        need java "a Java 17 runtime: apt-get install openjdk-17-jre-headless"
        need mvn "Maven, to fetch JMeter from Maven Central: apt-get install maven"
        local t; t=$(stamp)
        local work; work=$(mktemp -d)
        mvn -q -B -Dstyle.color=never -f "$REPO/infra/tools/jmeter/pom.xml" dependency:copy-dependencies \
            -DoutputDirectory="$work/deps" >&2
        rm -rf "$home.tmp" && mkdir -p "$home.tmp/lib/ext" "$home.tmp/lib/junit" "$home.tmp/bin"
        (cd "$home.tmp" && unzip -q -o "$work/deps/ApacheJMeter_config-$JMETER_VERSION.jar" 'bin/*')
        cp "$work/deps/ApacheJMeter-$JMETER_VERSION.jar" "$home.tmp/bin/ApacheJMeter.jar"
        for m in core http components functions; do
            cp "$work/deps/ApacheJMeter_$m-$JMETER_VERSION.jar" "$home.tmp/lib/ext/"
        done
        for jar in "$work/deps"/*.jar; do
            case "$(basename "$jar")" in
                ApacheJMeter-*|ApacheJMeter_config-*|ApacheJMeter_core-*|ApacheJMeter_http-*|\
                ApacheJMeter_components-*|ApacheJMeter_functions-*) ;;
                *) cp "$jar" "$home.tmp/lib/" ;;
            esac
        done
        rm -rf "$work" "$home"
        touch "$home.tmp/.complete"
        mv "$home.tmp" "$home"
        log "jmeter $JMETER_VERSION assembled: $(elapsed "$t") s"
    fi
    cat > "$TOOLS/bin/jmeter" <<WRAP
#!/bin/sh
# JMeter $JMETER_VERSION (assembled by infra/tools/install.sh). JVM_ARGS adds JVM options.
exec java \${JVM_ARGS:-} -jar "$home/bin/ApacheJMeter.jar" "\$@"
WRAP
    chmod +x "$TOOLS/bin/jmeter"
    record_version jmeter "$JMETER_VERSION"
}

# k6 (constant-arrival-rate executor = open-model constant rate) from the Go module proxy. The
# build takes ~3 min on 2 cores, so it is skipped whenever the installed binary has the version.
install_k6() {
    if [ -x "$TOOLS/bin/k6" ] && "$TOOLS/bin/k6" version 2>/dev/null | grep -q "$K6_VERSION"; then
        log "k6 $K6_VERSION present"
    else
        need go "Go >= 1.24, to build k6 from the Go module proxy"
        local t; t=$(stamp)
        local gobin; gobin=$(mktemp -d)
        GOBIN="$gobin" GOFLAGS=-buildvcs=false go install "go.k6.io/k6@$K6_VERSION"
        mv "$gobin/k6" "$TOOLS/bin/k6" && rm -rf "$gobin"
        log "k6 $K6_VERSION built: $(elapsed "$t") s"
    fi
    record_version k6 "$K6_VERSION"
}

install_demo() {
    BENCHTRAIL_TOOLS_DIR="$TOOLS" "$REPO/infra/demo/build.sh"
}

components=("$@")
[ ${#components[@]} -eq 0 ] && components=(apt jmeter k6 demo)
for c in "${components[@]}"; do
    case "$c" in
        apt) install_apt ;;
        hey|wrk) install_apt "$c" ;;
        jmeter) install_jmeter ;;
        k6) install_k6 ;;
        demo) install_demo ;;
        *) log "unknown component '$c' (apt, hey, wrk, jmeter, k6, demo)"; exit 2 ;;
    esac
done
log "tools in $TOOLS (export BENCHTRAIL_TOOLS_DIR=$TOOLS)"

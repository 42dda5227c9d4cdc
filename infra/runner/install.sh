#!/usr/bin/env bash
# Installs a Benchtrail runner on this host into one folder: its own virtualenv made from the runner's
# lock file (worker/runner/uv.lock: Celery, the Redis client, httpx, psutil ... never the server's
# dependencies) and the load tools it is configured for. Idempotent; rerun it to upgrade.
#
#   infra/runner/install.sh --prefix /opt/benchtrail-runner --tools hey,k6
#
# Writes PREFIX/venv, PREFIX/tools/bin/<tool>, PREFIX/bin/benchtrail-runner (the command to start it)
# and PREFIX/runner.env.example. Needs: Python 3.11 and uv (python3 -m pip install uv); per tool:
# hey, wrk: apt (root); jmeter: Java 17 and Maven; k6: Go >= 1.24 (built, ~3 min on 2 cores).
# The checkout is needed only while installing: PREFIX holds everything the runner uses.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PREFIX=""
TOOL_LIST="hey"

usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
log() { printf '[runner-install] %s\n' "$*" >&2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX="${2:?--prefix needs a folder}"; shift 2 ;;
        --prefix=*) PREFIX="${1#*=}"; shift ;;
        --tools) TOOL_LIST="${2?--tools needs a list (hey,wrk,jmeter,k6; empty for none)}"; shift 2 ;;
        --tools=*) TOOL_LIST="${1#*=}"; shift ;;
        -h|--help) usage ;;
        *) log "unknown argument '$1'"; usage ;;
    esac
done
[ -n "$PREFIX" ] || { log "--prefix is required"; usage; }
IFS=',' read -r -a TOOLS <<< "$TOOL_LIST"
for t in "${TOOLS[@]}"; do
    case "$t" in
        hey|wrk|jmeter|k6) ;;
        *) log "unknown tool '$t' (hey, wrk, jmeter, k6)"; exit 2 ;;
    esac
done
command -v uv >/dev/null || { log "needs uv: python3 -m pip install uv"; exit 1; }

mkdir -p "$PREFIX/bin" "$PREFIX/tools/bin"
PREFIX="$(cd "$PREFIX" && pwd)"

# Exactly the locked versions (--frozen), the runner itself installed as a copy (--no-editable).
log "virtualenv $PREFIX/venv from worker/runner/uv.lock"
UV_PROJECT_ENVIRONMENT="$PREFIX/venv" uv sync --project "$REPO/worker/runner" --frozen --no-dev \
    --no-editable --compile-bytecode --python 3.11 --quiet

if [ ${#TOOLS[@]} -gt 0 ]; then
    BENCHTRAIL_TOOLS_DIR="$PREFIX/tools" "$REPO/infra/tools/install.sh" "${TOOLS[@]}"
fi

cat > "$PREFIX/bin/benchtrail-runner" <<WRAP
#!/bin/sh
# Benchtrail runner installed by infra/runner/install.sh; its tools are in $PREFIX/tools/bin.
BENCHTRAIL_TOOLS_DIR="\${BENCHTRAIL_TOOLS_DIR:-$PREFIX/tools}"
export BENCHTRAIL_TOOLS_DIR
exec "$PREFIX/venv/bin/benchtrail-runner" "\$@"
WRAP
chmod 755 "$PREFIX/bin/benchtrail-runner"

cat > "$PREFIX/runner.env.example" <<'ENV'
# Copy to runner.env (chmod 600: it holds the broker password and the token), fill in, then
#   bin/benchtrail-runner check --env-file runner.env
#   bin/benchtrail-runner start --env-file runner.env
BENCHTRAIL_API_URL=https://benchtrail.example.com
BENCHTRAIL_BROKER_URL=redis://:REDIS_PASSWORD@broker.example.com:6379/0
BENCHTRAIL_RUNNER_TOKEN=
BENCHTRAIL_RUNNER_POOLS=default
# BENCHTRAIL_RUNNER_NAME=load-host-1
# BENCHTRAIL_TARGET_ALLOWLIST=127.0.0.1:*,localhost:*,[::1]:*
ENV

log "installed: $PREFIX/bin/benchtrail-runner start --env-file $PREFIX/runner.env (see runner.env.example)"

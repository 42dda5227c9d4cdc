#!/bin/sh
# benchtrail-env COMMAND [ARG...]: runs COMMAND with the connection settings the compose stack keeps in files.
# The entrypoint of the Benchtrail images; by hand: docker compose exec api benchtrail-env benchtrail admin ...
#
#   BENCHTRAIL_DATABASE_URL, unless set: postgresql+psycopg://benchtrail:PASSWORD@HOST:PORT/benchtrail, with the
#     password read from BENCHTRAIL_POSTGRES_PASSWORD_FILE, HOST = BENCHTRAIL_POSTGRES_HOST (postgres) and
#     PORT = BENCHTRAIL_POSTGRES_PORT (5432)
#   BENCHTRAIL_REDIS_URL, unless set: redis://:PASSWORD@HOST:PORT/0, with the password read from
#     BENCHTRAIL_REDIS_PASSWORD_FILE, BENCHTRAIL_REDIS_HOST (redis), BENCHTRAIL_REDIS_PORT (6379)
#   BENCHTRAIL_RUNNER_TOKEN, unless set: read from BENCHTRAIL_RUNNER_TOKEN_FILE
#
# Without the *_FILE variables (a runner started with `docker run --env-file runner.env`) nothing changes.
# The passwords reach the process's environment only, never a command line or the container's settings.
set -eu

secret() {  # the first line of file $2, for setting $1; exits 78 (configuration error) when there is none
    if [ ! -r "$2" ]; then
        echo "benchtrail-env: cannot read $2 (named by $1_FILE): is the secrets volume mounted?" >&2
        exit 78
    fi
    value=""
    IFS= read -r value < "$2" || true
    if [ -z "$value" ]; then
        echo "benchtrail-env: $2 (named by $1_FILE) is empty" >&2
        exit 78
    fi
    printf '%s' "$value"
}

if [ -z "${BENCHTRAIL_DATABASE_URL:-}" ] && [ -n "${BENCHTRAIL_POSTGRES_PASSWORD_FILE:-}" ]; then
    password=$(secret BENCHTRAIL_POSTGRES_PASSWORD "$BENCHTRAIL_POSTGRES_PASSWORD_FILE")
    BENCHTRAIL_DATABASE_URL="postgresql+psycopg://benchtrail:${password}@${BENCHTRAIL_POSTGRES_HOST:-postgres}:${BENCHTRAIL_POSTGRES_PORT:-5432}/benchtrail"
    export BENCHTRAIL_DATABASE_URL
fi
if [ -z "${BENCHTRAIL_REDIS_URL:-}" ] && [ -n "${BENCHTRAIL_REDIS_PASSWORD_FILE:-}" ]; then
    password=$(secret BENCHTRAIL_REDIS_PASSWORD "$BENCHTRAIL_REDIS_PASSWORD_FILE")
    BENCHTRAIL_REDIS_URL="redis://:${password}@${BENCHTRAIL_REDIS_HOST:-redis}:${BENCHTRAIL_REDIS_PORT:-6379}/0"
    export BENCHTRAIL_REDIS_URL
fi
if [ -z "${BENCHTRAIL_RUNNER_TOKEN:-}" ] && [ -n "${BENCHTRAIL_RUNNER_TOKEN_FILE:-}" ]; then
    BENCHTRAIL_RUNNER_TOKEN=$(secret BENCHTRAIL_RUNNER_TOKEN "$BENCHTRAIL_RUNNER_TOKEN_FILE")
    export BENCHTRAIL_RUNNER_TOKEN
fi
unset password value
if [ $# -eq 0 ]; then
    echo "usage: benchtrail-env COMMAND [ARG...]" >&2
    exit 64
fi
exec "$@"

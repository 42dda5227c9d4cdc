#!/bin/bash
# The official postgres image's entrypoint, the part the compose stack relies on: started as root it prepares
# PGDATA and runs again as postgres; on an empty PGDATA it runs initdb with POSTGRES_USER, the password of
# POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE and POSTGRES_INITDB_ARGS, lets TCP clients in with scram-sha-256,
# and creates POSTGRES_DB; then it runs the command (`postgres ...`). One difference: TCP clients on loopback
# need the password too (the official image trusts them), since the test runs the containers in the host's
# network.
set -Eeuo pipefail
if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi
if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$BASH_SOURCE" "$@"
fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    password="${POSTGRES_PASSWORD:-}"
    if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then password="$(< "$POSTGRES_PASSWORD_FILE")"; fi
    if [ -z "$password" ]; then echo "postgres stand-in: POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE is required" >&2; exit 1; fi
    user="${POSTGRES_USER:-postgres}"
    # shellcheck disable=SC2086  # POSTGRES_INITDB_ARGS is a list of options, split as the official image does
    initdb --username="$user" --pwfile=<(printf '%s\n' "$password") --auth-local=trust --auth-host=scram-sha-256 \
        ${POSTGRES_INITDB_ARGS:-} -D "$PGDATA" >/dev/null
    printf '\nhost all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start >/dev/null
    db="${POSTGRES_DB:-$user}"
    if [ "$db" != postgres ]; then
        psql -v ON_ERROR_STOP=1 -q -p 5432 --username "$user" --dbname postgres -c "CREATE DATABASE \"$db\"" >/dev/null
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres stand-in: database cluster initialised"
fi
exec "$@"

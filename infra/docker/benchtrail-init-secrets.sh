#!/bin/sh
# The compose stack's `secrets` service: runs as root before PostgreSQL and Redis start, and makes sure the
# `secrets` volume (mounted at DIR, default /run/secrets/benchtrail) holds their passwords:
#   postgres-password, redis-password   given by BENCHTRAIL_POSTGRES_PASSWORD / BENCHTRAIL_REDIS_PASSWORD at the
#                                       first start, or else generated (256 random bits, hex); kept afterwards.
# Owner 10001 (the Benchtrail images' user), group 999 (the user and group the postgres and redis images run as),
# mode 0440, in a folder of mode 0750: nobody else in any container can read them. The `migrate` service adds
# runner-token (mode 0400) beside them.
set -eu
dir=${1:-/run/secrets/benchtrail}
owner=10001:999
umask 077

fail() { echo "benchtrail-init-secrets: $*" >&2; exit 78; }

[ "$(id -u)" = 0 ] || fail "must run as root (it hands the files to uid 10001 and group 999)"
mkdir -p "$dir"
chown "$owner" "$dir"
chmod 0750 "$dir"

keep() {  # keep NAME VARIABLE: the password in $dir/NAME, from $VARIABLE or generated when the file is new
    file=$dir/$1
    eval "given=\${$2:-}"
    if [ -s "$file" ]; then
        if [ -n "$given" ] && [ "$given" != "$(cat "$file")" ]; then
            fail "$2 differs from the password this stack was created with (kept in the secrets volume as $1); unset it, or set the kept one"
        fi
    else
        if [ -n "$given" ]; then
            # Passwords go into connection URLs as they are: only characters a URL needs no escape for.
            case "$given" in
                *[!A-Za-z0-9._~-]*) fail "$2 may contain only letters, digits and . _ ~ - (it goes into a URL)" ;;
            esac
            [ ${#given} -ge 16 ] || fail "$2 must be at least 16 characters long"
            value=$given
        else
            value=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
        fi
        printf '%s\n' "$value" > "$file.new"
        sync "$file.new"
        mv "$file.new" "$file"
        sync "$dir"
        echo "benchtrail-init-secrets: $1 $([ -n "$given" ] && echo "set from $2" || echo generated)"
    fi
    chown "$owner" "$file"
    chmod 0440 "$file"
}

keep postgres-password BENCHTRAIL_POSTGRES_PASSWORD
keep redis-password BENCHTRAIL_REDIS_PASSWORD

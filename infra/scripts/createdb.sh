#!/usr/bin/env bash
# createdb.sh PORT NAME [ROLE_PASSWORD_FILE SUPERUSER_PASSWORD_FILE]
# Create role+database NAME on the local cluster if missing. With password files (the durable cluster
# of `make up`), the superuser logs in with its password and role NAME gets the password in
# ROLE_PASSWORD_FILE (generated once, mode 0600). Passwords travel on stdin/env, never on a command line.
set -euo pipefail
port=$1 name=$2 role_pwfile=${3:-} super_pwfile=${4:-}
if [ -n "$super_pwfile" ]; then
  PGPASSWORD=$(cat "$super_pwfile")
  export PGPASSWORD
fi
psql=(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -Atq)
"${psql[@]}" -c "select 1 from pg_roles where rolname='$name'" | grep -q 1 || "${psql[@]}" -c "create role \"$name\" login"
if [ -n "$role_pwfile" ]; then
  if [ ! -s "$role_pwfile" ]; then
    mkdir -p "$(dirname "$role_pwfile")"
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$role_pwfile")
  fi
  chmod 600 "$role_pwfile"
  printf "ALTER ROLE \"%s\" LOGIN PASSWORD '%s';\n" "$name" "$(cat "$role_pwfile")" | "${psql[@]}" >/dev/null
fi
"${psql[@]}" -c "select 1 from pg_database where datname='$name'" | grep -q 1 || "${psql[@]}" -c "create database \"$name\" owner \"$name\""

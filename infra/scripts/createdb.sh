#!/usr/bin/env bash
# createdb.sh PORT NAME: create role+database NAME on the local cluster if missing.
set -euo pipefail
port=$1 name=$2
psql=(psql -h 127.0.0.1 -p "$port" -U postgres -v ON_ERROR_STOP=1 -Atq)
"${psql[@]}" -c "select 1 from pg_roles where rolname='$name'" | grep -q 1 || "${psql[@]}" -c "create role \"$name\" login"
"${psql[@]}" -c "select 1 from pg_database where datname='$name'" | grep -q 1 || "${psql[@]}" -c "create database \"$name\" owner \"$name\""

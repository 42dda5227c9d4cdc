#!/usr/bin/env bash
# Start/stop a project-local PostgreSQL: postgres.sh start|stop|status DATA_DIR PORT
# PostgreSQL refuses to run as root, so as root the data dir is handed to the `postgres` user.
set -euo pipefail
cmd=$1 dir=$(realpath -m "$2") port=$3
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bindir/pg_ctl" ] || { echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
    d="$dir"; while [ "$d" != "/" ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  if as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then exit 0; fi
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
  ;;
stop)
  [ -f "$dir/data/PG_VERSION" ] || exit 0
  as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  ;;
status)
  as_pg "$bindir/pg_ctl" -D "$dir/data" status
  ;;
*) echo "usage: $0 start|stop|status DATA_DIR PORT" >&2; exit 2 ;;
esac

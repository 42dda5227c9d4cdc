#!/usr/bin/env bash
# Start/stop a project-local PostgreSQL:
#   postgres.sh start DIR PORT [--test] [--password-file FILE]
#   postgres.sh stop|status DIR PORT
#
# Default (what `make up` uses): durable (fsync, synchronous_commit and full_page_writes on) and
# closed: every connection, TCP or socket, needs a password (scram-sha-256). The superuser password
# is generated once into FILE (mode 0600; default DIR/../secrets/postgres-superuser-password).
#
# --test (the test harness only): fsync, synchronous_commit and full_page_writes OFF and `trust`
# authentication, for speed. A power loss can corrupt such a cluster: never use it for real data.
#
# The mode is chosen when the cluster is created and remembered in DIR/mode, so a plain restart keeps
# it. A cluster created by an older version of this script (trust) is converted to passwords.
#
# PostgreSQL refuses to run as root: as root, DIR is handed to the `postgres` user. No permission of
# any folder above DIR is changed: DIR's parents must already be traversable by `postgres` (/tmp and
# /var/lib/benchtrail, where `make up` keeps its cluster as root, are); otherwise the script stops and
# names the folder. DIR may contain spaces (not a single quote). A durable cluster listens on TCP
# 127.0.0.1 only (no Unix socket, whose path is limited to 107 bytes).
set -euo pipefail
cmd=${1:-} dir=$(realpath -m "${2:-.}") port=${3:-}
shift 3 || { echo "usage: $0 start|stop|status DIR PORT [--test] [--password-file FILE]" >&2; exit 2; }
mode_flag=durable pwfile=""
while [ $# -gt 0 ]; do
  case "$1" in
    --test) mode_flag=test ;;
    --password-file) pwfile=$(realpath -m "$2"); shift ;;
    *) echo "postgres.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
pwfile=${pwfile:-$(dirname "$dir")/secrets/postgres-superuser-password}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bindir/pg_ctl" ] || { echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A password file (0600, owned by whoever runs this script) with a random password, made once.
ensure_password() {
  local file=$1
  if [ ! -s "$file" ]; then
    mkdir -p "$(dirname "$file")"
    chmod 700 "$(dirname "$file")"
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$file")
  fi
  chmod 600 "$file"
}

check_traversable() {
  [ "$(id -u)" -eq 0 ] || return 0
  local d
  d=$(dirname "$dir")
  while [ "$d" != "/" ]; do
    if ! runuser -u postgres -- test -x "$d"; then
      echo "postgres.sh: the postgres user cannot enter $d (needed to reach $dir)." >&2
      echo "  Put the data folder somewhere postgres can reach, or allow it yourself (e.g. chmod o+x $d);" >&2
      echo "  this script never changes permissions outside its own data folder." >&2
      exit 1
    fi
    d=$(dirname "$d")
  done
}

hba_with_passwords() {
  cat >"$dir/data/pg_hba.conf" <<'EOF'
# Written by infra/scripts/postgres.sh: every connection needs a password (scram-sha-256).
local   all   all                 scram-sha-256
host    all   all   127.0.0.1/32  scram-sha-256
host    all   all   ::1/128       scram-sha-256
EOF
  [ "$(id -u)" -ne 0 ] || chown postgres: "$dir/data/pg_hba.conf"
  chmod 600 "$dir/data/pg_hba.conf"
}

pg_start() {  # pg_start EXTRA_OPTIONS (pg_ctl hands -o to a shell: the folder is quoted)
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
    -o "-p $port -c listen_addresses=127.0.0.1 $1" start >/dev/null
}

case "$dir" in *"'"*) echo "postgres.sh: the data folder's path may not contain a single quote: $dir" >&2; exit 2 ;; esac
case "$cmd" in
start)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  chmod 700 "$dir"
  check_traversable
  mode=$(cat "$dir/mode" 2>/dev/null || true)
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    mode=$mode_flag
    if [ "$mode" = test ]; then
      as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    else
      ensure_password "$pwfile"
      # initdb reads the password from a file the postgres user can read: a private copy, removed at once.
      tmp="$dir/.initdb-pw"
      install -m 600 /dev/null "$tmp"
      cat "$pwfile" >"$tmp"
      [ "$(id -u)" -ne 0 ] || chown postgres: "$tmp"
      as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=scram-sha-256 --pwfile="$tmp" -E UTF8 \
        >"$dir/initdb.log" 2>&1 || { rm -f "$tmp"; cat "$dir/initdb.log" >&2; exit 1; }
      rm -f "$tmp"
      hba_with_passwords
    fi
    echo "$mode" >"$dir/mode"
  elif [ -z "$mode" ]; then
    # A cluster from before passwords (trust): give the superuser a password, then close it.
    mode=durable
    ensure_password "$pwfile"
    as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 && as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    # Single-user mode: no connection at all while it still trusts everyone.
    printf "ALTER ROLE postgres PASSWORD '%s';\n" "$(cat "$pwfile")" \
      | as_pg "$bindir/postgres" --single -D "$dir/data" postgres >"$dir/convert.log" 2>&1 \
      || { cat "$dir/convert.log" >&2; exit 1; }
    grep -q "ERROR" "$dir/convert.log" && { cat "$dir/convert.log" >&2; exit 1; }
    rm -f "$dir/convert.log"
    hba_with_passwords
    echo "$mode" >"$dir/mode"
  fi
  if as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then exit 0; fi
  if [ "$mode" = test ]; then
    # TEST ONLY: fast and unsafe (a crash can lose or corrupt data).
    pg_start "-k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  else
    pg_start "-c unix_socket_directories= -c fsync=on -c synchronous_commit=on -c full_page_writes=on -c password_encryption=scram-sha-256"
  fi
  ;;
stop)
  [ -f "$dir/data/PG_VERSION" ] || exit 0
  as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  ;;
status)
  as_pg "$bindir/pg_ctl" -D "$dir/data" status
  ;;
*) echo "usage: $0 start|stop|status DIR PORT [--test] [--password-file FILE]" >&2; exit 2 ;;
esac

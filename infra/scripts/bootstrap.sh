#!/usr/bin/env bash
# Install what Benchtrail needs on a Debian/Ubuntu machine; safe to run again (installs only what is
# missing). Usage: bootstrap.sh [--browser] [--tools] [--frontend] [--docker]
#   --frontend builds what the API serves: the dashboard (frontend/dist) and the manual (site/, at /docs).
#   --docker: what the container test needs (tests/integration/test_containers.py): Debian's Docker engine,
#   debootstrap (its stand-in base images) and Compose v2 (`docker compose`), built from the Go module proxy.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
want_browser=0 want_tools=0 want_frontend=0 want_docker=0
for a in "$@"; do
  case "$a" in
    --browser) want_browser=1 ;; --tools) want_tools=1 ;; --frontend) want_frontend=1 ;; --docker) want_docker=1 ;;
  esac
done
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
# Toolchains that images install outside the default PATH (k6 needs a recent Go to build).
for d in /usr/local/go/bin "$HOME/go/bin" "$HOME/.local/bin"; do
  [ -d "$d" ] && case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac
done
export PATH

pkgs=()
command -v redis-server >/dev/null || pkgs+=(redis-server)
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || pkgs+=(postgresql)
command -v psql >/dev/null || pkgs+=(postgresql-client)
command -v hey >/dev/null || pkgs+=(hey)
command -v wrk >/dev/null || pkgs+=(wrk)
command -v node >/dev/null || pkgs+=(nodejs npm)
if [ "$want_browser" = 1 ]; then command -v chromium >/dev/null || pkgs+=(chromium); fi
if [ "$want_tools" = 1 ]; then
  command -v java >/dev/null || pkgs+=(default-jdk-headless)
  command -v mvn >/dev/null || pkgs+=(maven)
  command -v go >/dev/null || pkgs+=(golang-go)
fi
if [ "$want_docker" = 1 ]; then
  command -v dockerd >/dev/null || pkgs+=(docker.io)
  command -v debootstrap >/dev/null || pkgs+=(debootstrap)
  command -v go >/dev/null || pkgs+=(golang-go)
fi
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "bootstrap: installing ${pkgs[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi

if ! command -v uv >/dev/null; then
  echo "bootstrap: installing uv"
  python3 -m pip install -q uv==0.13.8 2>/dev/null || python3 -m pip install -q --user uv==0.13.8
  export PATH="$HOME/.local/bin:$PATH"
fi
# Bytecode compiled once, at install, as pip does by default: without it (uv's default, or with
# PYTHONDONTWRITEBYTECODE set) every process (the CLI, each API and Celery worker, each tool run)
# compiles its imports from source again: 0.3 s of the CLI's 0.5 s start.
(cd "$repo" && uv sync --frozen -q --compile-bytecode && .venv/bin/python -m compileall -q -j 0 backend worker >/dev/null)

if [ "$want_frontend" = 1 ] && [ -f "$repo/frontend/package.json" ]; then
  cd "$repo/frontend"
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
  fi
  if [ ! -f dist/index.html ] || [ -n "$(find src index.html -newer dist/index.html -print -quit 2>/dev/null)" ]; then
    if ! npm run --silent build >/tmp/benchtrail-frontend-build.log 2>&1; then
      cat /tmp/benchtrail-frontend-build.log >&2
      echo "bootstrap: the frontend build failed (output above)" >&2
      exit 1
    fi
  fi
fi

# The manual, rebuilt when its pages or the code its reference pages are generated from changed.
if [ "$want_frontend" = 1 ]; then
  cd "$repo"
  if [ ! -f site/index.html ] || [ -n "$(find docs mkdocs.yml infra/docs frontend/src/api/openapi.json backend/benchtrail/config.py \
        backend/benchtrail/cli backend/benchtrail/metrics.py worker/runner/benchtrail_runner/config.py \
        worker/runner/benchtrail_runner/cli.py -newer site/index.html -print -quit 2>/dev/null)" ]; then
    if ! NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet >/tmp/benchtrail-docs-build.log 2>&1; then
      cat /tmp/benchtrail-docs-build.log >&2
      echo "bootstrap: the manual's build failed (output above)" >&2
      exit 1
    fi
  fi
fi

# Compose v2 as a docker CLI plugin, built from the Go module proxy (Debian has only docker-compose 1.29, the
# Python one, which `docker compose` does not run); about 5 minutes on 2 cores, once.
if [ "$want_docker" = 1 ]; then
  compose_version=v2.40.3
  plugin=/usr/local/lib/docker/cli-plugins/docker-compose
  if ! docker compose version 2>/dev/null | grep -q "${compose_version#v}"; then
    echo "bootstrap: building Compose $compose_version (docker compose) from the Go module proxy"
    src=$(go mod download -json "github.com/docker/compose/v2@$compose_version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    build=$(mktemp -d)
    cp -r "$src/." "$build/" && chmod -R u+w "$build"
    $SUDO mkdir -p "$(dirname "$plugin")"
    (cd "$build" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath \
       -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$compose_version" -o "$build/docker-compose" ./cmd)
    $SUDO install -m 755 "$build/docker-compose" "$plugin"
    rm -rf "$build"
  fi
fi

if [ "$want_tools" = 1 ] && [ -x "$repo/infra/tools/install.sh" ]; then
  "$repo/infra/tools/install.sh"
fi

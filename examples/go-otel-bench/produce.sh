#!/usr/bin/env bash
# Runs src/span_test.go against released versions of go.opentelemetry.io/otel/sdk (modules from the Go module
# proxy) and writes results/otel-sdk-<version>.txt: `go test -bench -benchmem -count 5` output, one file per
# version. Not used by `make test`; the outputs are committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/results"
for v in ${VERSIONS:-v1.24.0 v1.28.0 v1.31.0 v1.34.0 v1.36.0}; do
  work=$(mktemp -d)
  cp "$here/src/go.mod" "$here/src/span_test.go" "$work/"
  (cd "$work" && go get "go.opentelemetry.io/otel/sdk@$v" "go.opentelemetry.io/otel@$v" >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1 \
    && go test -run '^$' -bench . -benchmem -count 5 -benchtime 200ms . > "$here/results/otel-sdk-$v.txt")
  rm -rf "$work"
done

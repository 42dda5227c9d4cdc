#!/usr/bin/env bash
# tests/corpus/go-bench: our stdlib-only benchmarks run by the installed Go with different flags. Not used by
# `make test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/go-bench
mkdir -p "$corpus"
v=$(go env GOVERSION)
cd "$here"
go test -run '^$' -bench . -benchmem -count 5 -benchtime 50ms ./hashing > "$corpus/${v}_hashing_benchmem_count5.txt"
go test -run '^$' -bench . -benchmem -cpu 1,2 -benchtime 50ms ./... > "$corpus/${v}_two-packages_cpu1-2.txt"
go test -run '^$' -bench Logs -v -benchtime 100x ./hashing > "$corpus/${v}_verbose_logs.txt"
go test -run '^$' -bench Builder -count 3 -benchtime 20ms ./text > "$corpus/${v}_custom-metric_count3.txt"

#!/usr/bin/env bash
# tests/corpus/google-benchmark: bench.cc built against Debian's libbenchmark-dev, run with different reporting
# options. Not used by `make test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/google-benchmark
mkdir -p "$here/work" "$corpus"
g++ -O2 -std=c++17 "$here/bench.cc" -o "$here/work/bench" -lbenchmark -lpthread
v=$(dpkg-query -W -f='${Version}' libbenchmark-dev | cut -d- -f1)
b="$here/work/bench --benchmark_min_time=0.02"
$b --benchmark_format=json > "$corpus/gbench-${v}_single.json"
$b --benchmark_repetitions=5 --benchmark_out="$corpus/gbench-${v}_repetitions5.json" --benchmark_out_format=json > /dev/null
$b --benchmark_repetitions=4 --benchmark_report_aggregates_only=true --benchmark_format=json > "$corpus/gbench-${v}_aggregates-only.json"
$b --benchmark_repetitions=3 --benchmark_display_aggregates_only=true --benchmark_out="$corpus/gbench-${v}_display-aggregates.json" --benchmark_out_format=json > /dev/null
$b --benchmark_filter='BM_(Micro|Milli|Seconds)' --benchmark_repetitions=3 --benchmark_format=json > "$corpus/gbench-${v}_time-units.json"
$b --benchmark_filter=BM_Shared --benchmark_format=json --benchmark_counters_tabular=true > "$corpus/gbench-${v}_threads.json"

#!/usr/bin/env bash
# The wrk and hey files of tests/corpus (see tests/corpus/SOURCES.md), against loopback targets only:
#   18491 benchtrail-demo-target -slow 5ms      18492 benchtrail-demo-target -slow 800ms
#   18493 benchtrail-demo-target -slow 1500ms   18490 flaky_server.py --slow 1.5
#   18499 nothing listening (connect errors)
# wrk 4.1.0 takes --timeout in whole seconds (no ms unit).
# hey exits 0 even when every request failed. Not used by `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)
T=${BENCHTRAIL_TOOLS_DIR:-/work/main/.tools}/bin
mkdir -p "$corpus/wrk-text" "$corpus/hey-text" "$corpus/hey-csv"
w() { name=$1; shift; "$T/wrk" "$@" > "$corpus/wrk-text/$name.txt" 2>&1; }
w wrk-4.1.0_c10_latency        -t2 -c10 -d3s --latency http://127.0.0.1:18491/
w wrk-4.1.0_c1_t1              -t1 -c1 -d2s http://127.0.0.1:18491/
w wrk-4.1.0_c64_t4             -t4 -c64 -d3s http://127.0.0.1:18491/
w wrk-4.1.0_c128_latency       -t2 -c128 -d3s --latency http://127.0.0.1:18491/echo
w wrk-4.1.0_timeouts_alternate -t2 -c20 -d4s --timeout 1s -s "$here/alternate.lua" http://127.0.0.1:18493/
w wrk-4.1.0_timeouts_latency   -t2 -c20 -d4s --timeout 1s --latency -s "$here/alternate.lua" http://127.0.0.1:18493/
w wrk-4.1.0_slow_only_timeouts -t1 -c4 -d3s --timeout 1s http://127.0.0.1:18493/slow
w wrk-4.1.0_flaky_errors       -t2 -c16 -d4s --timeout 1s --latency http://127.0.0.1:18490/
w wrk-4.1.0_flaky_c4           -t1 -c4 -d3s --timeout 2s http://127.0.0.1:18490/
h() { name=$1; shift; "$T/hey" "$@" > "$corpus/hey-text/$name.txt" 2>&1; }
h hey-0.1.4_n2000_c10   -n 2000 -c 10 http://127.0.0.1:18491/
h hey-0.1.4_z3s_c20     -z 3s -c 20 http://127.0.0.1:18491/
h hey-0.1.4_n500_c1     -n 500 -c 1 http://127.0.0.1:18491/echo
h hey-0.1.4_q50_c4      -z 2s -q 50 -c 4 http://127.0.0.1:18491/
h hey-0.1.4_flaky_errors -n 400 -c 8 -t 1 http://127.0.0.1:18490/
h hey-0.1.4_slow_timeouts -n 40 -c 4 -t 1 http://127.0.0.1:18492/slow
h hey-0.1.4_post_body   -n 300 -c 6 -m POST -d '{"k":"v"}' -T application/json http://127.0.0.1:18491/echo
h hey-0.1.4_connect_refused -n 20 -c 2 http://127.0.0.1:18499/
c() { name=$1; shift; "$T/hey" -o csv "$@" > "$corpus/hey-csv/$name.csv" 2>&1; }
c hey-0.1.4_csv_n1000_c10 -n 1000 -c 10 http://127.0.0.1:18491/
c hey-0.1.4_csv_z2s_c4    -z 2s -c 4 http://127.0.0.1:18491/echo
c hey-0.1.4_csv_flaky     -n 300 -c 6 -t 1 http://127.0.0.1:18490/
c hey-0.1.4_csv_n200_c1   -n 200 -c 1 http://127.0.0.1:18491/

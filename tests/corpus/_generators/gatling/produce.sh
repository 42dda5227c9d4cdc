#!/usr/bin/env bash
# The Gatling files of tests/corpus (see tests/corpus/SOURCES.md): AssertSim run by released Gatling versions
# from Maven Central against the loopback demo target (18491) and the flaky server (18490).
# Not used by `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/gatling-simulation-log
mkdir -p "$corpus"
for spec in ${SPECS:-3.7.6:18491 3.9.5:18491 3.9.5:18490 3.10.5:18491 3.11.5:18490 3.12.0:18491 3.13.5:18491 3.14.3:18490}; do
  v=${spec%%:*}; port=${spec#*:}
  res=$here/work/results-$v-$port; rm -rf "$res"
  # Gatling >= 3.13 writes its binary log through the JDK's string internals: it needs java.lang opened.
  "$here/run.sh" "$v" "$res" --add-opens=java.base/java.lang=ALL-UNNAMED -Dtarget=http://127.0.0.1:$port -Drate=15 -Dseconds=3 > "$here/work/gatling-$v-$port.out" 2>&1
  log=$(find "$res" -name simulation.log | head -1)
  [ -n "$log" ] && cp "$log" "$corpus/gatling-${v}_assertsim_port$port.simulation.log"
  grep -E "^> |^Global:|^[^ ]+.*: (max|percentage|95th)" "$here/work/gatling-$v-$port.out" | grep -v DEBUG > "$corpus/gatling-${v}_assertsim_port$port.printed.txt" || true
done

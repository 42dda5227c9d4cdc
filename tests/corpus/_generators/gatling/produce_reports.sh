#!/usr/bin/env bash
# Gatling's HTML report data (js/stats.json and js/stats.js) of AssertSim, for tests/corpus/gatling-stats-json.
# Not used by `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/gatling-stats-json
mkdir -p "$corpus"
for spec in ${SPECS:-3.9.5:18490 3.14.3:18491}; do
  v=${spec%%:*}; port=${spec#*:}
  lib=$here/work/lib-$v; cls=$here/work/classes-$v; res=$here/work/reports-$v-$port; rm -rf "$res"
  java --add-opens=java.base/java.lang=ALL-UNNAMED -Dtarget=http://127.0.0.1:$port -Drate=15 -Dseconds=3 \
    -cp "$cls:$lib/*" io.gatling.app.Gatling -s AssertSim -rf "$res" > "$here/work/report-$v.out" 2>&1
  js=$(find "$res" -path '*/js/stats.json' | head -1)
  [ -n "$js" ] && cp "$js" "$corpus/gatling-${v}_assertsim_port${port}_stats.json"
  js=$(find "$res" -path '*/js/stats.js' | head -1)
  [ -n "$js" ] && cp "$js" "$corpus/gatling-${v}_assertsim_port${port}_stats.js"
done
exit 0

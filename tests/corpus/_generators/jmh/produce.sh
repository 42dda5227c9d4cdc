#!/usr/bin/env bash
# The JMH files of tests/corpus (see tests/corpus/SOURCES.md): our TinyBench run with several released JMH
# versions. Not used by `make test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)
mkdir -p "$corpus/jmh-text" "$corpus/jmh-json"
for v in ${VERSIONS:-1.21 1.23 1.32 1.36 1.37}; do
  "$here/run.sh" "$v" /tmp -bm avgt,sample -tu us -prof gc -rf json -rff "$corpus/jmh-json/tinybench_jmh-${v}_avgt-sample_us_gcprof.json" \
    > "$corpus/jmh-text/tinybench_jmh-${v}_avgt-sample_us_gcprof.console.txt" 2>&1
  "$here/run.sh" "$v" /tmp -bm thrpt,ss -tu s -rf text -rff "$corpus/jmh-text/tinybench_jmh-${v}_thrpt-ss_s.txt" > /dev/null 2>&1
done

#!/usr/bin/env bash
# tests/corpus/k6-*: script.js run by k6 (Benchtrail's tools folder) against loopback targets. k6 exits 99 when a
# threshold fails (one is meant to). Not used by `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)
K=${BENCHTRAIL_TOOLS_DIR:-/work/main/.tools}/bin/k6
v=$($K version | awk '{print $2}')
mkdir -p "$corpus/k6-summary-export" "$corpus/k6-handlesummary-json" "$corpus/k6-json-output" "$corpus/k6-csv-output"
$K run -q --summary-export "$corpus/k6-summary-export/k6-${v}_vus4.json" "$here/script.js" > /dev/null 2>&1
$K run -q -e VUS=8 -e TARGET=http://127.0.0.1:18490 --summary-export "$corpus/k6-summary-export/k6-${v}_flaky_vus8.json" "$here/script.js" > /dev/null 2>&1
SUMMARY_JSON="$corpus/k6-handlesummary-json/k6-${v}_handlesummary.json" $K run -q -e SUMMARY_JSON="$corpus/k6-handlesummary-json/k6-${v}_handlesummary.json" "$here/script.js" > /dev/null 2>&1
$K run -q -e INDENT=1 -e VUS=2 -e SUMMARY_JSON="$corpus/k6-handlesummary-json/k6-${v}_handlesummary_indented.json" "$here/script.js" > /dev/null 2>&1
$K run -q -e VUS=2 -e DURATION=2s --out json="$corpus/k6-json-output/k6-${v}_out.ndjson" "$here/script.js" > /dev/null 2>&1
$K run -q -e VUS=3 -e DURATION=2s -e TARGET=http://127.0.0.1:18490 --out json="$corpus/k6-json-output/k6-${v}_flaky_out.ndjson" "$here/script.js" > /dev/null 2>&1
$K run -q -e VUS=2 -e DURATION=2s --out csv="$corpus/k6-csv-output/k6-${v}_out.csv" "$here/script.js" > /dev/null 2>&1
K6_CSV_TIME_FORMAT=unix_milli $K run -q -e VUS=2 -e DURATION=2s --out csv="$corpus/k6-csv-output/k6-${v}_out_unix-milli.csv" "$here/script.js" > /dev/null 2>&1
exit 0

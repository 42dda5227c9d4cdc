#!/usr/bin/env bash
# tests/corpus/locust-csv: locustfile.py with released Locust versions from PyPI (a venv each), headless against
# loopback targets. Not used by `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/locust-csv
mkdir -p "$corpus"
for v in ${VERSIONS:-2.32.4}; do
  venv=$here/work/venv-$v
  [ -x "$venv/bin/locust" ] || { uv venv -q "$venv"; uv pip install -q --python "$venv/bin/python" "locust==$v"; }
  (cd "$here" && "$venv/bin/locust" -f locustfile.py --headless -u 6 -r 3 -t 5s -H http://127.0.0.1:18491 \
     --csv "$corpus/locust-${v}_demo" --only-summary > /dev/null 2>&1)
  (cd "$here" && "$venv/bin/locust" -f locustfile.py --headless -u 6 -r 6 -t 5s -H http://127.0.0.1:18490 \
     --csv "$corpus/locust-${v}_flaky" --csv-full-history --only-summary > /dev/null 2>&1)
done
exit 0

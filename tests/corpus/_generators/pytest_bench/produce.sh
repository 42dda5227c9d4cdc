#!/usr/bin/env bash
# tests/corpus/pytest-benchmark: test_tiny.py with released pytest-benchmark versions from PyPI, each in a venv of
# its own (uv). Not used by `make test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/pytest-benchmark
mkdir -p "$corpus"
for v in ${VERSIONS:-5.1.0 4.0.0}; do
  venv=$here/work/venv-$v
  [ -x "$venv/bin/python" ] || { uv venv -q "$venv"; uv pip install -q --python "$venv/bin/python" "pytest-benchmark==$v" "pytest<9"; }
  (cd "$here" && "$venv/bin/python" -m pytest -q -p no:cacheprovider test_tiny.py --benchmark-min-rounds=5 \
     --benchmark-max-time=0.05 --benchmark-json="$corpus/pytest-benchmark-${v}.json" > /dev/null)
  (cd "$here" && "$venv/bin/python" -m pytest -q -p no:cacheprovider test_tiny.py -k "sorted or json" \
     --benchmark-min-rounds=5 --benchmark-max-time=0.05 --benchmark-save-data \
     --benchmark-json="$corpus/pytest-benchmark-${v}_save-data.json" > /dev/null)
done

#!/usr/bin/env bash
# tests/corpus/hyperfine: Debian's hyperfine timing small local commands. Not used by `make test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/hyperfine
mkdir -p "$corpus"
v=$(hyperfine --version | awk '{print $2}')
hyperfine -N --runs 10 --export-json "$corpus/hyperfine-${v}_two-commands.json" 'true' 'ls /' > /dev/null 2>&1
hyperfine --runs 5 --warmup 1 -P ms 5 15 -D 5 --export-json "$corpus/hyperfine-${v}_parameter-scan.json" 'sleep 0.0{ms}' > /dev/null 2>&1
hyperfine -N --runs 6 -i --export-json "$corpus/hyperfine-${v}_ignore-failure.json" 'false' 'true' > /dev/null 2>&1
hyperfine --runs 8 -n gzip -n "python startup" --export-json "$corpus/hyperfine-${v}_named.json" 'gzip -c /etc/services' 'python3 -c pass' > /dev/null 2>&1
hyperfine -N --runs 3 -L tool wc,md5sum --export-json "$corpus/hyperfine-${v}_list-parameter.json" '{tool} /etc/services' > /dev/null 2>&1

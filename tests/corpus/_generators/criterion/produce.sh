#!/usr/bin/env bash
# Build and run benches/tiny.rs with each Criterion release; copy the JSON files Criterion writes under
# target/criterion into tests/corpus/criterion/<version>/. Not used by `make test`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)/criterion
for v in ${VERSIONS:-0.5.1 0.4.0}; do
  work=$here/work/crate-$v
  mkdir -p "$work"
  cp -r "$here/src" "$here/benches" "$work/"
  sed "s/CRITERION_VERSION/$v/" "$here/Cargo.toml.in" > "$work/Cargo.toml"
  (cd "$work" && CARGO_TARGET_DIR="$here/work/target" cargo bench --bench tiny -- --noplot > "$work/console.txt" 2>&1)
  (cd "$here/work/target/criterion" && find . \( -path '*/new/estimates.json' -o -path '*/new/sample.json' \) -print0) | while IFS= read -r -d '' f; do
    dest="$corpus/$v/$(dirname "$(dirname "$f")" | sed 's|^\./||; s|/|__|g; s| |_|g')_$(basename "$f")"
    mkdir -p "$(dirname "$dest")"; cp "$here/work/target/criterion/$f" "$dest"
  done
  rm -rf "$here/work/target/criterion"
done

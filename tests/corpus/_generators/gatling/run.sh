#!/usr/bin/env bash
# Produce a Gatling simulation.log of our AssertSim with a released Gatling from Maven Central (not used by
# `make test`). usage: run.sh VERSION RESULTS_DIR [-Dtarget=http://127.0.0.1:PORT -Drate=N -Dseconds=N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
v=$1; out=$2; shift 2
lib=$here/work/lib-$v
if [ ! -d "$lib" ]; then
  (cd "$here" && mvn -q -Dgatling.version="$v" dependency:copy-dependencies -DoutputDirectory="$lib")
fi
cls=$here/work/classes-$v
rm -rf "$cls"; mkdir -p "$cls"
javac -cp "$lib/*" -d "$cls" "$here"/src/*.java
mkdir -p "$out"
java "$@" -cp "$cls:$lib/*" io.gatling.app.Gatling -s AssertSim -rf "$out" -nr

#!/usr/bin/env bash
# Produce JMH outputs of our TinyBench with a released JMH from Maven Central (not used by `make test`).
# usage: run.sh VERSION OUTDIR [jmh args...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
v=$1; out=$2; shift 2
lib=$here/work/lib-$v
if [ ! -d "$lib" ]; then
  (cd "$here" && mvn -q -Djmh.version="$v" dependency:copy-dependencies -DoutputDirectory="$lib")
fi
cls=$here/work/classes-$v
rm -rf "$cls"; mkdir -p "$cls"
jars=$(ls "$lib"/*.jar | tr '\n' ':')
javac -cp "$jars" -processorpath "$jars" -d "$cls" "$here"/src/bench/*.java
mkdir -p "$out"
java -cp "$cls:$lib/*" org.openjdk.jmh.Main "$@"

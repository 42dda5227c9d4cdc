#!/usr/bin/env bash
# The JMeter files of tests/corpus (see tests/corpus/SOURCES.md): corpus.jmx run by JMeter 5.6.3 with
# different save-service settings against loopback targets (18491 demo target, 18490 flaky server, 18499
# nothing). Not used by `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../.." && pwd)
J=${BENCHTRAIL_TOOLS_DIR:-/work/main/.tools}/bin/jmeter
mkdir -p "$corpus/jmeter-csv" "$corpus/jmeter-xml"
run() { dir=$1; name=$2; shift 2; out="$corpus/$dir/$name"; rm -f "$out"
  $J -n -t "$here/corpus.jmx" -l "$out" -j /tmp/jmeter-corpus.log -Jduration=${DURATION:-8} "$@" > /tmp/jmeter-corpus.out 2>&1
  grep "summary =" /tmp/jmeter-corpus.out | tail -1 > "${out%.*}.printed.txt"; }
S=jmeter.save.saveservice
run jmeter-csv jmeter-5.6.3_default.jtl
run jmeter-csv jmeter-5.6.3_ts-yyyy-slash-HHmmss.jtl "-J$S.timestamp_format=yyyy/MM/dd HH:mm:ss"
run jmeter-csv jmeter-5.6.3_ts-iso-millis.jtl "-J$S.timestamp_format=yyyy-MM-dd HH:mm:ss.SSS" -Jthreads=6
run jmeter-csv jmeter-5.6.3_ts-day-first.jtl "-J$S.timestamp_format=dd/MM/yyyy HH:mm:ss" -Jport=18490
run jmeter-csv jmeter-5.6.3_ts-month-first-millis.jtl "-J$S.timestamp_format=MM/dd/yyyy HH:mm:ss.SSS"
run jmeter-csv jmeter-5.6.3_ts-iso-T-zone.jtl "-J$S.timestamp_format=yyyy-MM-dd'T'HH:mm:ss.SSSZ"
JVM_ARGS=-Duser.timezone=Europe/Berlin run jmeter-csv jmeter-5.6.3_ts-berlin-comma-millis.jtl "-J$S.timestamp_format=dd.MM.yyyy HH:mm:ss,SSS"
run jmeter-csv jmeter-5.6.3_tx-parent.jtl -Jparent=true
run jmeter-csv jmeter-5.6.3_tabs.jtl "-J$S.default_delimiter=\t"
run jmeter-csv jmeter-5.6.3_headerless.jtl "-J$S.print_field_names=false" -Jthreads=2
run jmeter-csv jmeter-5.6.3_end-timestamps.jtl -Jsampleresult.timestamp.start=false
run jmeter-csv jmeter-5.6.3_all-fields.jtl -J$S.hostname=true -J$S.sample_count=true -J$S.encoding=true -J$S.filename=true -J$S.idle_time=true -J$S.connect_time=true -Jsample_variables=JMeterThread.last_sample_ok
run jmeter-csv jmeter-5.6.3_flaky.jtl -Jport=18490 -Jthreads=8 -Jthink=0
run jmeter-csv jmeter-5.6.3_semicolon.jtl "-J$S.default_delimiter=;" -Jwriters=0
run jmeter-xml jmeter-5.6.3_default.xml -J$S.output_format=xml
run jmeter-xml jmeter-5.6.3_tx-parent-subresults.xml -J$S.output_format=xml -Jparent=true
run jmeter-xml jmeter-5.6.3_assertions-responsedata.xml -J$S.output_format=xml -J$S.assertion_results=all -J$S.response_data.on_error=true -J$S.assertion_results_failure_message=true
run jmeter-xml jmeter-5.6.3_flaky.xml -J$S.output_format=xml -Jport=18490 -Jthink=0
exit 0

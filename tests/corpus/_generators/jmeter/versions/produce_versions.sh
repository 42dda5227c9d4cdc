#!/usr/bin/env bash
# JMeter files of tests/corpus from released JMeter versions other than 5.6.3: each version's modules resolved from
# Maven Central (versions/pom.xml), laid out as a JMeter home (bin/ from ApacheJMeter_config, lib/ext/ the
# ApacheJMeter_* jars, lib/ the rest), then corpus.jmx run against the loopback demo target. Not used by `make test`.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=$(cd "$here/../.." && pwd)
# JMeter < 5.4's XStream reflects into the JDK: Java 17 needs these packages opened to it.
OPENS="--add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED --add-opens java.base/java.text=ALL-UNNAMED --add-opens java.desktop/java.awt.font=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED"
for v in ${VERSIONS:-5.5 5.4.3 5.2.1 4.0 3.3}; do
  home=$here/work/jm-$v
  if [ ! -f "$home/bin/ApacheJMeter.jar" ]; then
    (cd "$here/versions" && mvn -q -Djmeter.version="$v" dependency:copy-dependencies -DoutputDirectory="$home/lib") || continue
    mkdir -p "$home/lib/ext"
    (cd "$home" && unzip -qo "lib/ApacheJMeter_config-$v.jar" 'bin/*')
    mv "$home/lib/ApacheJMeter-$v.jar" "$home/bin/ApacheJMeter.jar"
    for m in core http components functions; do mv "$home/lib/ApacheJMeter_$m-$v.jar" "$home/lib/ext/"; done
  fi
  java $OPENS -jar "$home/bin/ApacheJMeter.jar" -n -t "$here/corpus.jmx" -l "$corpus/jmeter-csv/jmeter-${v}_default.jtl" \
    -j /tmp/jmeter-corpus-$v.log -Jduration=6 > "$corpus/jmeter-csv/jmeter-${v}_default.printed.txt.out" 2>&1
  grep "summary =" "$corpus/jmeter-csv/jmeter-${v}_default.printed.txt.out" | tail -1 > "$corpus/jmeter-csv/jmeter-${v}_default.printed.txt"
  rm -f "$corpus/jmeter-csv/jmeter-${v}_default.printed.txt.out"
  java $OPENS -jar "$home/bin/ApacheJMeter.jar" -n -t "$here/corpus.jmx" -l "$corpus/jmeter-xml/jmeter-${v}_default.xml" \
    -j /tmp/jmeter-corpus-$v.log -Jduration=4 -Jjmeter.save.saveservice.output_format=xml -Jparent=true > /dev/null 2>&1
done
exit 0

"""A name a result file gives that its column cannot store (a NUL byte, an unpaired surrogate, longer than the
column) refuses the file naming the field: at the upload's check where that reads the file whole, else at its
ingest. The upload fuzz test found each of these accepted and then failing the ingest on a database error."""

from __future__ import annotations

import pytest

from benchtrail.ingest.detect import check_file, ingest_file
from benchtrail.ingest.model import ParseError
from benchtrail.ingest.parsers import jmeter_csv

from tests.support.corpus import real

JMH = "jmh-text/aws-xray-java-agent_2.8.x_auto-instrumentation.txt"
HEADER = ("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,"
          "sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect")


def _jtl(labels: list[str]) -> str:
    rows = [f"{1_700_000_000_000 + i * 10},{5 + i % 7},{label},200,OK,TG 1-1,text,true,,100,50,1,1,http://x/,5,0,0"
            for i, label in enumerate(labels)]
    return "\n".join([HEADER, *rows]) + "\n"


@pytest.mark.parametrize("name, problem", [
    ("SqlBench\x00mark.sqlQuery", "contains a NUL byte at character 8"),
    ("SqlBenchmark." + "sqlQuery" * 70, "is 573 characters long; at most 500 are kept"),
])
def test_a_benchmark_name_its_column_cannot_hold_refuses_the_upload(write, name: str, problem: str) -> None:
    text = real(JMH).read_text(encoding="utf-8")
    assert "SqlBenchmark.sqlQuery" in text
    path = write("jmh.txt", text.replace("SqlBenchmark.sqlQuery", name))
    with pytest.raises(ParseError) as info:
        check_file(path, format="jmh-text")
    assert info.value.field == "scenario" and problem in info.value.reason, info.value.reason
    check_file(real(JMH), format="jmh-text")   # the file as it is: accepted


def test_a_label_in_the_rows_an_upload_checks_refuses_the_upload(write) -> None:
    with pytest.raises(ParseError) as info:
        check_file(write("a.jtl", _jtl(["GET /", "GET /\x00x"])), format="jmeter-csv")
    assert info.value.field == "scenario" and "NUL byte at character 5" in info.value.reason, info.value.reason


def test_a_label_past_the_rows_an_upload_checks_refuses_the_ingest_naming_it(write) -> None:
    """A JMeter CSV is checked on its first rows when uploaded (here 10, 20,000 in the API); a label with a NUL
    byte further on is refused when the worker reads the whole file (the run fails naming the file and the field),
    not by the database."""
    path = write("a.jtl", _jtl(["GET /"] * 30 + ["GET /\x00x"]))
    jmeter_csv.check_head(path, rows=10)
    with pytest.raises(ParseError) as info:
        ingest_file(path, format="jmeter-csv")
    assert info.value.field == "scenario" and "NUL byte at character 5" in info.value.reason, info.value.reason
    ingest_file(write("b.jtl", _jtl(["GET /"] * 31)), format="jmeter-csv")

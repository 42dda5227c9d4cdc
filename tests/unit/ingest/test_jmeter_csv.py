"""JMeter CSV: values checked against the csv module + numpy on the same raw files."""

from __future__ import annotations

import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import detect_format, parse_file
from benchtrail.ingest.model import LoadSpec, ParseError, ParseOptions

from tests.support.corpus import real
from tests.support.oracle import assert_matches, by_label, is_tx, read_jtl, summarise

HEADER17 = ("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,"
            "failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect")


def _row(ts: int, elapsed: int, label: str = "GET /", thread: str = "TG 1-1", ok: bool = True,
         grp: int = 1, message: str = "OK") -> str:
    return (f"{ts},{elapsed},{label},{200 if ok else 500},{message},{thread},text,"
            f"{'true' if ok else 'false'},,100,50,{grp},{grp},http://x/,{elapsed},0,0")


@pytest.mark.parametrize("name", [
    "jmeter-csv/ehrbase_ehrbase-load-test_result.jtl",
    "jmeter-csv/Gwayaboy_mslearn-tailspin-spacegame-web-deploy_results.jtl",
    "jmeter-csv/jenkinsci_performance-plugin_filewithtransactions.csv",
    "jmeter-csv/taurus_slow-stdev.jtl",
    "jmeter-csv/taurus_unicode.jtl",
    "jmeter-csv/jenkinsci_performance-plugin_multiLineCSV.jtl",
])
def test_cells_match_independent_computation(name: str) -> None:
    path = real(name)
    rows = read_jtl(path)
    result = build_cells(parse_file(path))
    cells = {(c.scenario, c.load.key): c for c in result.cells}
    groups = parse_file(path).meta["thread_groups"]
    group_key = {g: k for k, gs in groups.items() for g in gs.split(" + ")}  # type: ignore[union-attr]
    from tests.support.oracle import thread_group
    per_key: dict[str, list] = {}
    for r in rows:
        per_key.setdefault(group_key[thread_group(r["threadName"])], []).append(r)
    for key, krows in per_key.items():
        for label, lrows in by_label(krows).items():
            assert_matches(cells[(label, key)].stats, summarise(lrows))
        non_tx = [r for r in krows if not is_tx(r)]
        if non_tx:
            assert_matches(cells[(None, key)].stats, summarise(non_tx))


def test_transaction_rows_form_own_cells_but_not_totals() -> None:
    path = real("jmeter-csv/jenkinsci_performance-plugin_filewithtransactions.csv")
    rows = read_jtl(path)
    parsed = parse_file(path)
    assert int(parsed.samples["is_transaction"].sum()) == 103 == sum(map(is_tx, rows))  # type: ignore[index]
    result = build_cells(parsed)
    total = [c for c in result.cells if c.scenario is None]
    assert len(total) == 1 and total[0].stats["count"] == 313 - 103
    tx_cells = [c for c in result.cells if c.is_transaction]
    assert {c.scenario for c in tx_cells} == {r["label"] for r in rows if is_tx(r)}


def test_thread_groups_become_load_levels(write) -> None:
    lines = [HEADER17]
    t = 1_700_000_000_000
    for group, (gnum, threads) in {"Base 10": (1, 10), "Base 20": (2, 20), "Base 50": (3, 50)}.items():
        for i in range(threads * 2):
            lines.append(_row(t + i * 7, 5 + i % 13, "A" if i % 2 else "B",
                              f"{group} {gnum}-{i % threads + 1}", grp=threads))
        t += 100_000
    parsed = parse_file(write("tg.jtl", "\n".join(lines) + "\n"))
    assert parsed.loads == {f"threads:{n}": LoadSpec("threads", float(n)) for n in (10, 20, 50)}
    assert parsed.meta["thread_groups"] == {"threads:10": "Base 10", "threads:20": "Base 20",
                                            "threads:50": "Base 50"}
    counts = parsed.samples.group_by("load_key").len().sort("load_key").rows()  # type: ignore[union-attr]
    assert dict(counts) == {"threads:10": 20, "threads:20": 40, "threads:50": 100}


def test_thread_count_from_distinct_threads_without_grpthreads(write) -> None:
    text = "timeStamp,elapsed,label,threadName,success\n" + "".join(
        f"{1_700_000_000_000 + i},{10 + i},L,{g} {n}-{i % t + 1},true\n"
        for n, (g, t) in enumerate([("Small", 3), ("Big", 7)], start=1) for i in range(20))
    parsed = parse_file(write("x.jtl", text))
    assert set(parsed.loads) == {"threads:3", "threads:7"}
    assert parsed.meta["thread_groups"] == {"threads:3": "Small", "threads:7": "Big"}


def test_single_thread_group_uses_max_grpthreads() -> None:
    parsed = parse_file(real("jmeter-csv/taurus_slow-stdev.jtl"))
    rows = read_jtl(real("jmeter-csv/taurus_slow-stdev.jtl"))
    assert list(parsed.loads) == [f"threads:{max(int(r['grpThreads']) for r in rows)}"]


def test_headerless_10_and_12_columns(write) -> None:
    parsed = parse_file(real("jmeter-csv/jenkinsci_performance-plugin_JENKINS-16627_headerless.jtl"))
    s = parsed.samples
    assert s["latency_us"].to_list() == [1425000, 59000, 2204000]  # type: ignore[index]
    assert s["scenario"].to_list()[0] == "GET /ordermgmt/login - Login Page"  # type: ignore[index]
    text = "".join(f"{1_700_000_000_000 + i * 10},{i + 1},lbl,200,OK,TG 1-{i % 4 + 1},text,true,"
                   f"{100 + i},4,4,{i}\n" for i in range(12))
    p12 = parse_file(write("h12.jtl", text))
    assert detect_format(write("h12b.jtl", text)) == "jmeter-csv"
    assert p12.samples.height == 12 and list(p12.loads) == ["threads:4"]  # type: ignore[union-attr]
    assert p12.samples["bytes"].to_list() == list(range(100, 112))  # type: ignore[index]


def test_headerless_other_column_count_needs_columns(write) -> None:
    path = write("h11.jtl", "1700000000000,5,a,200,OK,TG 1-1,text,true,1,2,3\n")
    with pytest.raises(ParseError, match="11 columns"):
        parse_file(path, format="jmeter-csv")
    cols = ("timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName",
            "dataType", "success", "bytes", "x", "y")
    parsed = parse_file(path, format="jmeter-csv", options=ParseOptions(columns=cols))
    assert parsed.samples["latency_us"].to_list() == [5000]  # type: ignore[index]


def test_tab_delimiter_and_custom_columns() -> None:
    path = real("jmeter-csv/taurus_tabs.jtl")
    rows = read_jtl(path, delimiter="\t")
    s = build_cells(parse_file(path)).cells
    total = next(c for c in s if c.scenario is None)
    assert_matches(total.stats, summarise(rows))


def test_quoted_sample_variable_headers() -> None:
    path = real("jmeter-csv/taurus_quote-guessing-crash.jtl")
    parsed = parse_file(path)
    assert "SessionName" in parsed.meta["columns"]  # type: ignore[operator]
    assert parsed.samples.height == len(read_jtl(path))  # type: ignore[union-attr]


def test_quoted_fields_with_commas_and_newlines() -> None:
    parsed = parse_file(real("jmeter-csv/jenkinsci_performance-plugin_multiLineCSV.jtl"))
    labels = parsed.samples["scenario"].to_list()  # type: ignore[index]
    assert labels[0] == "Preparation: Login"
    assert labels[1].startswith('no such element: Unable to locate element: {"method":"id"')
    assert labels[1].count("\n") == 2
    assert parsed.samples["success"].to_list() == [True, False]  # type: ignore[index]


def test_unsorted_timestamps_use_min_start_and_max_end(write) -> None:
    text = HEADER17 + "\n" + "\n".join([_row(1000_000, 50), _row(900_000, 10), _row(950_000, 200_000)]) + "\n"
    cell = next(c for c in build_cells(parse_file(write("u.jtl", text))).cells if c.scenario is None)
    assert cell.stats["duration_s"] == (1_150_000 - 900_000) / 1000
    assert cell.stats["throughput"] == 3 / 250.0


def test_truncated_last_line_names_the_line(write, tmp_path) -> None:
    src = real("jmeter-csv/Gwayaboy_mslearn-tailspin-spacegame-web-deploy_results.jtl")
    data = src.read_bytes()
    cut = data[: data.rstrip(b"\n").rfind(b"\n") + 1 + 40]   # 40 bytes into the last row
    n_lines = cut.count(b"\n") + 1
    with pytest.raises(ParseError) as exc:
        parse_file(write("cut.jtl", cut))
    assert exc.value.line == n_lines
    assert "truncated" in str(exc.value)


def test_non_numeric_elapsed_names_line_and_column(write) -> None:
    text = HEADER17 + "\n" + _row(1_700_000_000_000, 5) + "\n" + _row(1_700_000_000_010, 7).replace(
        ",7,GET", ",abc,GET") + "\n" + _row(1_700_000_000_020, 9) + "\n"
    with pytest.raises(ParseError) as exc:
        parse_file(write("bad.jtl", text))
    assert (exc.value.line, exc.value.field) == (3, "elapsed")
    assert "'abc' is not a number" in str(exc.value)


def test_error_line_counts_physical_lines_of_multiline_fields(write) -> None:
    text = (HEADER17 + "\n" + _row(1, 5, label='"multi\nline"') + "\n" + _row(2, 6) + "\n"
            + _row(3, 7).replace(",7,GET", ",x7,GET") + "\n")
    with pytest.raises(ParseError) as exc:
        parse_file(write("ml.jtl", text))
    assert exc.value.line == 5


def test_formatted_timestamps_are_inferred_given_and_refused_when_ambiguous(write) -> None:
    from datetime import datetime, timezone
    from zoneinfo import ZoneInfo

    from benchtrail.ingest.model import ParseOptions

    rows = [_row(1, 5).replace("1,5,", "2024/01/02 10:00:00,5,", 1), _row(1, 7).replace("1,7,", "2024/01/02 10:00:03,7,", 1)]
    path = write("fmt.jtl", HEADER17 + "\n" + "\n".join(rows) + "\n")
    parsed = parse_file(path, format="jmeter-csv")
    expected = datetime(2024, 1, 2, 10, 0, 0, tzinfo=timezone.utc).timestamp() * 1000
    assert parsed.samples["start_ms"].to_list() == [expected, expected + 3000]
    assert parsed.meta["timestamp_format"] == "yyyy/MM/dd HH:mm:ss" and parsed.meta["timestamp_precision_ms"] == 1000
    assert any("whole seconds" in w for w in parsed.warnings)
    # Given on upload, with the zone the JVM wrote in: an hour earlier in UTC in Paris' winter.
    paris = parse_file(path, format="jmeter-csv", options=ParseOptions(timestamp_format="yyyy/MM/dd HH:mm:ss",
                                                                       timestamp_zone="Europe/Paris"))
    local = datetime(2024, 1, 2, 10, 0, 0, tzinfo=ZoneInfo("Europe/Paris")).timestamp() * 1000
    assert paris.samples["start_ms"].to_list()[0] == local == expected - 3_600_000
    # 01/02/2024 may be the 1st of February or the 2nd of January: refused until the pattern is given.
    amb = write("amb.jtl", HEADER17 + "\n" + _row(1, 5).replace("1,5,", "01/02/2024 10:00:00,5,", 1) + "\n")
    with pytest.raises(ParseError, match="day-first or month-first") as exc:
        parse_file(amb, format="jmeter-csv")
    assert exc.value.field == "timeStamp"
    # A value off the pattern later in the file names its line and field.
    bad = write("bad.jtl", HEADER17 + "\n" + rows[0] + "\n" + rows[1].replace("2024/01/02 10:00:03", "yesterday") + "\n")
    with pytest.raises(ParseError) as exc:
        parse_file(bad, format="jmeter-csv")
    assert (exc.value.line, exc.value.field) == (3, "timeStamp") and "yyyy/MM/dd HH:mm:ss" in exc.value.reason


def test_wrong_delimiter(write) -> None:
    semi = HEADER17 + "\n" + _row(1_700_000_000_000, 5).replace(",", ";") + "\n"
    with pytest.raises(ParseError, match="delimiter") as exc:
        parse_file(write("semi.jtl", semi), format="jmeter-csv")
    assert exc.value.line == 2
    with pytest.raises(ParseError, match="cannot find the delimiter"):
        parse_file(write("nohdr.jtl", "a b c\n1 2 3\n"), format="jmeter-csv")


def test_empty_file(write) -> None:
    with pytest.raises(ParseError, match="empty"):
        parse_file(write("empty.jtl", b""))
    with pytest.raises(ParseError, match="no samples"):
        parse_file(write("hdr.jtl", HEADER17 + "\n"), format="jmeter-csv")


def test_bom_crcrlf_and_legacy_encoding(write) -> None:
    body = "\r\r\n".join([HEADER17, _row(1_700_000_000_000, 5, "Тест"), _row(1_700_000_000_001, 9, "Тест")])
    p = parse_file(write("bom.jtl", "\ufeff".encode() + body.encode("utf-8") + b"\r\r\n"))
    assert p.samples["scenario"].to_list() == ["Тест", "Тест"]  # type: ignore[index]
    assert p.samples["latency_us"].to_list() == [5000, 9000]  # type: ignore[index]
    gbk = (HEADER17 + "\n" + _row(1_700_000_000_000, 5, "接口") + "\n").encode("gbk")
    assert parse_file(write("gbk.jtl", gbk)).samples["scenario"].to_list() == ["接口"]  # type: ignore[index]


def test_timestamp_as_end_time(write) -> None:
    text = HEADER17 + "\n" + _row(1_700_000_000_500, 200) + "\n"
    p = parse_file(write("e.jtl", text), options=ParseOptions(timestamp_is_start=False))
    assert p.samples["start_ms"].to_list() == [1_700_000_000_300]  # type: ignore[index]


def test_legacy_encoding_after_a_utf8_head(write) -> None:
    head = [_row(1_700_000_000_000 + i, 5) for i in range(3000)]   # > 64 KiB of ASCII first
    data = (HEADER17 + "\n" + "\n".join(head) + "\n").encode() + \
        (_row(1_700_000_009_999, 7, "接口") + "\n").encode("gbk")
    parsed = parse_file(write("late.jtl", data))
    assert parsed.samples.height == 3001  # type: ignore[union-attr]
    assert parsed.samples["scenario"][-1] == "接口"  # type: ignore[index]


def test_gzipped_files(write) -> None:
    import gzip
    src = real("jmeter-csv/taurus_slow-stdev.jtl")
    plain = parse_file(src).samples
    path = write("x.jtl.gz", gzip.compress(src.read_bytes()))
    assert detect_format(path) == "jmeter-csv"
    assert parse_file(path).samples.equals(plain)  # type: ignore[union-attr]
    xml = real("jmeter-xml/taurus_resource_tc.jtl")
    assert parse_file(write("x.xml.gz", gzip.compress(xml.read_bytes()))).samples.equals(  # type: ignore[union-attr]
        parse_file(xml).samples)
    nd = real("k6-json-output/KirillY_k6-load-template_k6-results.ndjson")
    assert parse_file(write("k6.json.gz", gzip.compress(nd.read_bytes()))).samples.equals(  # type: ignore[union-attr]
        parse_file(nd).samples)

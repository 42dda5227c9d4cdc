"""JMeter XML: top-level samples only, checked against a full ElementTree read of the file."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import parse_file
from benchtrail.ingest.model import ParseError

from tests.support.corpus import real
from tests.support.oracle import TX_PREFIX


@pytest.mark.parametrize("name", [
    "jenkinsci_performance-plugin_JMeterResultsMultiLevel.jtl",
    "jenkinsci_performance-plugin_constraint-test.jtl.xml",
    "taurus_resource_tc.jtl",
    "jenkinsci_performance-plugin_JMeterResultsMultiThread.jtl",
])
def test_top_level_samples_only(name: str) -> None:
    path = real(f"jmeter-xml/{name}")
    top = [e for e in ET.parse(path).getroot() if e.tag in ("httpSample", "sample")]
    nested = sum(1 for e in top for _ in e.iter("httpSample")) - sum(e.tag == "httpSample" for e in top)
    parsed = parse_file(path)
    s = parsed.samples
    assert s.height == len(top)  # type: ignore[union-attr]
    assert s["latency_us"].to_list() == [int(e.get("t")) * 1000 for e in top]  # type: ignore[index, arg-type]
    assert s["start_ms"].to_list() == [int(e.get("ts")) for e in top]  # type: ignore[index, arg-type]
    assert s["success"].to_list() == [e.get("s") == "true" for e in top]  # type: ignore[index]
    tx = [(e.get("rm") or "").startswith(TX_PREFIX) for e in top]
    assert s["is_transaction"].to_list() == tx  # type: ignore[index]
    if name == "taurus_resource_tc.jtl":
        assert nested > 0   # sub-results exist and were not counted


def test_old_attribute_set_and_thread_counts() -> None:
    parsed = parse_file(real("jmeter-xml/jenkinsci_performance-plugin_JMeterResultsMultiThread.jtl"))
    assert list(parsed.loads) == ["threads:5"]   # no ng attribute: 5 distinct threads
    cell = next(c for c in build_cells(parsed).cells if c.scenario is None)
    assert cell.stats["latency_mean"] == (894 + 1508 + 1384 + 1581 + 996) / 5


def test_malformed_xml_names_line(write) -> None:
    text = ('<?xml version="1.0"?>\n<testResults version="1.2">\n'
            '<sample t="1" ts="2" s="true" lb="a">\n</testResults>\n')
    with pytest.raises(ParseError) as exc:
        parse_file(write("bad.jtl", text))
    assert exc.value.line == 4


def test_non_numeric_attribute(write) -> None:
    text = ('<?xml version="1.0"?>\n<testResults version="1.2">\n'
            '<sample t="x" ts="2" s="true" lb="a"/>\n</testResults>\n')
    with pytest.raises(ParseError) as exc:
        parse_file(write("bad.jtl", text))
    assert exc.value.field == "t"

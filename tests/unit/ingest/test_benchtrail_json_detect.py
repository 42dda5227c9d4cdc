"""Benchtrail JSON (schema, variants, samples) and format detection."""

from __future__ import annotations

import json

import pytest

from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import FORMATS, detect_format, parse_file
from benchtrail.ingest.model import LoadSpec, ParseError
from benchtrail.ingest.parsers.benchtrail_json import SCHEMA_PATH

from infra.localstack import REPO
from tests.support.corpus import LOCAL


def test_doc_schema_is_the_schema_the_parser_uses() -> None:
    doc_copy = REPO / "docs" / "benchtrail-json" / "schema-v1.json"
    assert json.loads(doc_copy.read_text(encoding="utf-8")) == \
        json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_seed_table_with_two_variants() -> None:
    path = LOCAL / "benchtrail_easeagent_seed.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    parsed = parse_file(path)
    assert parsed.format == "benchtrail-json"
    expected = {(v["name"], s["name"], m["load"]["value"]): m["stats"]
                for v in doc["variants"] for s in v["scenarios"] for m in s["loads"]}
    got = {(c.variant, c.scenario, c.load.value): c.stats for c in parsed.reported}
    assert got == expected
    assert parsed.reported[0].load == LoadSpec("threads", 10.0)
    [series] = parsed.series
    assert series.variant == "agent" and series.t_ms == sorted(series.t_ms)
    assert series.values == [12.5, 12.9, 13.1]


def test_samples_become_cells() -> None:
    parsed = parse_file(LOCAL / "benchtrail_samples.json")
    [reported] = parsed.reported
    assert reported.variant is None and reported.stats == {"cpu_pct": 41.5, "rss_mb": 212.0}
    cell = next(c for c in build_cells(parsed).cells if c.scenario == "GET /ping")
    assert cell.stats["count"] == 5 and cell.stats["errors"] == 1
    assert cell.stats["latency_mean"] == pytest.approx((1.25 + 2.5 + 0.75 + 10.0 + 3.125) / 5)
    assert cell.load.key == "rate:1000:d60s"


def _first(doc: dict) -> dict:
    return doc["variants"][0]["scenarios"][0]["loads"][0]


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(version=2), "$.version"),
    (lambda d: _first(d)["stats"].update(p75=1.0), "unknown metric 'p75'"),
    (lambda d: _first(d).update(load={"kind": "users"}), "$.variants[0].scenarios[0].loads[0].load.kind"),
    (lambda d: _first(d)["stats"].update(cpu_pct="high"), "'high' is not of type 'number'"),
])
def test_invalid_documents_name_the_path(write, mutate, message: str) -> None:
    doc = json.loads((LOCAL / "benchtrail_easeagent_seed.json").read_text(encoding="utf-8"))
    mutate(doc)
    with pytest.raises(ParseError) as exc:
        parse_file(write("b.json", json.dumps(doc)), format="benchtrail-json")
    assert message in str(exc.value)


def test_samples_refused_with_several_variants(write) -> None:
    doc = json.loads((LOCAL / "benchtrail_samples.json").read_text(encoding="utf-8"))
    doc["variants"].append({"name": "agent", "scenarios": [
        {"name": "x", "loads": [{"load": {"kind": "none"}, "stats": {"count": 1}}]}]})
    with pytest.raises(ParseError, match="single variant"):
        parse_file(write("s.json", json.dumps(doc)))


def test_unknown_format_names_what_was_seen(write) -> None:
    with pytest.raises(ParseError) as exc:
        parse_file(write("x.txt", "hello,world\n1,2\n"))
    assert "'hello,world'" in str(exc.value) and "supported" in str(exc.value)
    with pytest.raises(ParseError, match="binary file"):
        detect_format(write("x.bin", bytes(range(256)) * 4))
    with pytest.raises(ParseError, match="empty"):
        detect_format(write("e.txt", b"  \n"))
    with pytest.raises(ParseError, match="unknown format"):
        parse_file(write("y.txt", "x"), format="nope")


def test_oha_lookalike_is_not_taken_for_hey(write) -> None:
    text = ("Summary:\n  Success rate:\t100.00%\n  Total:\t1.0 secs\n  Requests/sec:\t10\n\n"
            "Response time histogram:\n")
    with pytest.raises(ParseError, match="unrecognised"):
        detect_format(write("oha.txt", text))


def test_every_registered_format_imports() -> None:
    from benchtrail.ingest.detect import get_parser
    for fmt in FORMATS:
        assert callable(get_parser(fmt))

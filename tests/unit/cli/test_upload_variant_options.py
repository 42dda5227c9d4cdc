"""`benchtrail upload --variant NAME=FILE;options`: the options of a file the server cannot infer."""

from __future__ import annotations

from pathlib import Path

from benchtrail.cli.client import parse_variant


def test_criterion_files_take_their_benchmark_from_their_folders(tmp_path: Path) -> None:
    est = tmp_path / "target" / "criterion" / "fib 15" / "new" / "estimates.json"
    est.parent.mkdir(parents=True)
    est.write_text("{}")
    assert parse_variant(f"main={est}")[2]["scenario"] == "fib 15"
    assert parse_variant(f"main={est};scenario=given")[2]["scenario"] == "given"
    other = tmp_path / "estimates.json"
    other.write_text("{}")
    assert "scenario" not in parse_variant(f"main={other}")[2]


def test_jmeter_timestamp_options_pass_through(tmp_path: Path) -> None:
    jtl = tmp_path / "r.jtl"
    jtl.write_text("timeStamp,elapsed\n")
    entry = parse_variant(f"v={jtl};timestamp_format=dd.MM.yyyy HH:mm:ss,SSS;timestamp_zone=Europe/Berlin")[2]
    assert entry["timestamp_format"] == "dd.MM.yyyy HH:mm:ss,SSS" and entry["timestamp_zone"] == "Europe/Berlin"

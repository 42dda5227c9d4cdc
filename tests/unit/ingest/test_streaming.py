"""Streamed ingest of a JMeter CSV: batch by batch into `SampleCounts`, numbers equal to numpy on the
raw file and to the whole-file parse; errors deep in the file named by line and field."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from benchtrail.ingest import cells as cells_module
from benchtrail.ingest.cells import build_cells
from benchtrail.ingest.detect import check_file, ingest_file, parse_file
from benchtrail.ingest.model import ParseError
from benchtrail.ingest.parsers import jmeter_csv
from tests.support.jtl import thread_group_size, write_jtl

from tests.support.oracle import nearest_rank


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many batches and many merges even on a test-sized file."""
    monkeypatch.setattr(jmeter_csv, "BATCH_ROWS", 1_000)
    monkeypatch.setattr(cells_module.Summariser, "MERGE_ROWS", 2_000)


def _numpy_cells(path: Path, warmup_s: float = 0.0) -> dict[tuple[str | None, int], dict[str, float]]:
    """Per (label or None for all labels, thread-group size), from the csv module and numpy only."""
    rows = list(csv.DictReader(path.open(newline="")))
    ts = np.array([int(r["timeStamp"]) for r in rows], dtype=np.int64)
    el = np.array([int(r["elapsed"]) for r in rows], dtype=np.int64)
    ok = np.array([r["success"] == "true" for r in rows])
    size = np.array([thread_group_size(r["threadName"]) for r in rows])
    label = np.array([r["label"] for r in rows])
    keep = np.ones(len(rows), dtype=bool)
    for g in np.unique(size):
        in_group = size == g
        keep &= ~in_group | (ts >= ts[in_group].min() + round(warmup_s * 1000))
    out = {}
    for g in np.unique(size):
        for lb in [None, *np.unique(label)]:
            m = keep & (size == g) & ((label == lb) if lb is not None else True)
            e, t = el[m], ts[m]
            out[(lb, int(g))] = {
                "count": int(m.sum()), "errors": int((~ok[m]).sum()), "latency_mean": float(e.mean()),
                "latency_min": float(e.min()), "latency_max": float(e.max()),
                "throughput": m.sum() / ((float((t + e).max()) - float(t.min())) / 1000.0),
                **{f"latency_{n}": nearest_rank(e, p) for n, p in (("p50", 50), ("p75", 75), ("p90", 90),
                                                                   ("p95", 95), ("p99", 99), ("p999", 99.9))},
            }
    return out


@pytest.mark.parametrize("warmup_s", [0.0, 4.5])
def test_streamed_file_gives_the_cells_numpy_computes(tmp_path: Path, small_batches: None,
                                                      warmup_s: float) -> None:
    path = write_jtl(tmp_path / "big.jtl", seed=5, per_group=3_000)   # 18,000 rows: 18 batches
    parsed, result = ingest_file(path, warmup_s=warmup_s)
    assert parsed.samples is None and result.counts is not None and result.counts.samples == 18_000
    expected = _numpy_cells(path, warmup_s)
    got = {(c.scenario, int(c.load.value or 0)): c.stats for c in result.cells}
    assert set(got) == set(expected)
    for key, exp in expected.items():
        stats = got[key]
        assert (stats["count"], stats["errors"]) == (exp["count"], exp["errors"]), key
        assert stats["latency_mean"] == pytest.approx(exp["latency_mean"], rel=1e-12), key
        assert (stats["latency_min"], stats["latency_max"]) == (exp["latency_min"], exp["latency_max"]), key
        assert stats["throughput"] == pytest.approx(exp["throughput"], rel=1e-12), key
        for name in ("p50", "p75", "p90", "p95", "p99", "p999"):
            assert math.isclose(stats[f"latency_{name}"], exp[f"latency_{name}"], rel_tol=1e-3), (key, name)
    assert result.warmup_excluded == 18_000 - sum(v["count"] for (lb, _), v in expected.items() if lb is None)


def test_streamed_cells_series_and_timelines_equal_the_whole_file_parse(tmp_path: Path,
                                                                       small_batches: None) -> None:
    path = write_jtl(tmp_path / "big.jtl", seed=8, per_group=2_500)
    whole = build_cells(parse_file(path), warmup_s=3)
    _, streamed = ingest_file(path, warmup_s=3)

    def cells(r):  # type: ignore[no-untyped-def]
        return [(c.scenario, c.load.key, c.stats, c.histogram, c.timeline, c.is_transaction) for c in r.cells]

    def series(r):  # type: ignore[no-untyped-def]
        return [(s.metric, s.scenario, s.load.key, s.t_ms, s.values, s.interval_ms) for s in r.series]

    assert cells(streamed) == cells(whole) and series(streamed) == series(whole)
    assert streamed.series and all(c.timeline for c in streamed.cells)


def test_two_thread_groups_of_one_size_merge_into_one_load_level(tmp_path: Path, small_batches: None) -> None:
    """Thread groups "TG 10" and "Checkout" both ran 10 threads: one load level, its cells and series
    the union of both groups' samples (numpy), however the batches split them."""
    path = write_jtl(tmp_path / "two.jtl", seed=11, per_group=2_000, groups=(10, 10, 50))
    path.write_text(path.read_text().replace(",TG 10 2-", ",Checkout 2-"))
    parsed, streamed = ingest_file(path)
    assert any("'Checkout' and 'TG 10' both ran 10 threads" in w for w in parsed.warnings)
    assert sorted({c.load.label for c in streamed.cells}) == ["10 threads", "50 threads"]

    rows = list(csv.DictReader(path.open(newline="")))
    ten = [r for r in rows if r["grpThreads"] == "10"]
    assert {r["threadName"].split(" ")[0] for r in ten} == {"TG", "Checkout"}
    el = np.array([int(r["elapsed"]) for r in ten])
    ts = np.array([int(r["timeStamp"]) for r in ten])
    cell = next(c for c in streamed.cells if c.scenario is None and c.load.label == "10 threads")
    assert cell.stats["count"] == len(ten) == 8_000
    assert cell.stats["errors"] == sum(r["success"] == "false" for r in ten)
    assert (cell.stats["latency_min"], cell.stats["latency_max"]) == (el.min(), el.max())
    assert cell.stats["throughput"] == pytest.approx(len(ten) / ((ts + el).max() - ts.min()) * 1000, rel=1e-12)
    for name, p in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        assert math.isclose(cell.stats[f"latency_{name}"], nearest_rank(el, p), rel_tol=1e-3), name

    whole = build_cells(parse_file(path))
    assert [(c.scenario, c.load.key, c.stats, c.histogram, c.timeline) for c in streamed.cells] == \
        [(c.scenario, c.load.key, c.stats, c.histogram, c.timeline) for c in whole.cells]
    assert [(s.metric, s.scenario, s.load.key, s.t_ms, s.values) for s in streamed.series] == \
        [(s.metric, s.scenario, s.load.key, s.t_ms, s.values) for s in whole.series]


def _with_bad_line(path: Path, line: int, text: str) -> Path:
    lines = path.read_text().split("\n")
    lines[line - 1] = text
    path.write_text("\n".join(lines))
    return path


def test_an_error_deep_in_the_file_passes_the_head_check_and_fails_the_full_parse(
        tmp_path: Path, small_batches: None) -> None:
    path = write_jtl(tmp_path / "deep.jtl", seed=3, per_group=5_000)   # 30,001 lines
    row = path.read_text().split("\n")[25_000 - 1].split(",")
    row[1] = "12x"
    _with_bad_line(path, 25_000, ",".join(row))
    assert check_file(path, options=None) == "jmeter-csv"   # the upload reads the first 20,000 rows only
    with pytest.raises(ParseError) as caught:
        ingest_file(path)
    assert (caught.value.line, caught.value.field) == (25_000, "elapsed")
    assert "'12x' is not a number" in caught.value.reason


def test_a_truncated_last_line_of_a_long_file_is_named(tmp_path: Path, small_batches: None) -> None:
    path = write_jtl(tmp_path / "cut.jtl", seed=4, per_group=1_000)   # 6,001 lines
    text = path.read_text()
    path.write_text(text[: text.rstrip("\n").rfind(",", 0, len(text) - 30)])
    with pytest.raises(ParseError) as caught:
        ingest_file(path)
    assert caught.value.line == 6_001 and "truncated" in caught.value.reason
    with pytest.raises(ParseError) as at_upload:
        check_file(path)
    assert at_upload.value.line == 6_001


def test_a_bad_row_within_the_head_is_refused_at_upload(tmp_path: Path) -> None:
    path = write_jtl(tmp_path / "early.jtl", seed=6, per_group=1_000)
    row = path.read_text().split("\n")[99].split(",")
    row[0] = "2023/11/14 22:13:20.000"
    _with_bad_line(path, 100, ",".join(row))
    with pytest.raises(ParseError) as caught:
        check_file(path)
    assert (caught.value.line, caught.value.field) == (100, "timeStamp")
    assert "is not a number" in caught.value.reason   # the file's first rows are epoch ms


def test_legacy_encoding_and_crcrlf_stream_through_a_recoded_copy(tmp_path: Path, small_batches: None) -> None:
    header = "timeStamp,elapsed,label,responseCode,threadName,success"
    rows = [f"{1_700_000_000_000 + i * 10},{5 + i % 7},接口{i % 2},200,TG 1-{1 + i % 3},true" for i in range(5_000)]
    path = tmp_path / "gbk.jtl"
    path.write_bytes(("\r\r\n".join([header, *rows]) + "\r\r\n").encode("gb18030"))
    _, result = ingest_file(path)
    by_label = {c.scenario: c.stats for c in result.cells if c.scenario is not None}
    for k in (0, 1):
        el = np.array([5 + i % 7 for i in range(5_000) if i % 2 == k], dtype=np.float64)
        assert by_label[f"接口{k}"]["count"] == el.size
        assert by_label[f"接口{k}"]["latency_mean"] == pytest.approx(el.mean(), rel=1e-12)


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_bytes_that_are_not_the_files_encoding_are_named_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  chunk: int) -> None:
    """A UTF-16 file (byte-order mark) with a lone low surrogate on its 3rd line, read in tiny chunks and
    in one: refused naming line 3, counted by hand."""
    from benchtrail.ingest import textio

    monkeypatch.setattr(textio, "CHUNK", chunk)
    lines = "timeStamp,elapsed\n1700000000000,12\n1700000000010,"
    data = b"\xff\xfe" + lines.encode("utf-16-le") + b"\x00\xdc" + "4\n".encode("utf-16-le")
    path = tmp_path / "u16.jtl"
    path.write_bytes(data)
    with pytest.raises(ParseError) as info:
        list(textio.iter_lines(path))
    assert info.value.line == 3, info.value

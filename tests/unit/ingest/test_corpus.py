"""Every genuine result file we hold is read through the worker's own ingest path (`ingest_file`, what the
`results.ingest` task calls per file) and compared with what an independent reader of the raw file says
(`tests/support/corpus_oracle.py`): counts and errors exact, latency mean/min/max exact, nearest-rank p50/p99
within the HDR histogram's 0.1%, a tool's printed totals as printed, micro-benchmark scores as written.

The corpus: every file under `shared/fixtures/real/<format-dir>/` (public files kept by the founders; a
file added there is picked up by this test with no change here) and under `tests/corpus/<format-dir>/`
(files real tools wrote on our machine: tests/corpus/SOURCES.md). `figure()` is the corpus figure the
manual states (docs/how-to/formats.md); `test_the_manual_states_the_corpus_figure` keeps them equal.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

import pytest

from benchtrail.ingest.detect import detect_format, ingest_file
from benchtrail.ingest.model import ParseError
from tests.support import corpus_oracle as oracle

from infra.localstack import REPO
from tests.support.corpus import REAL

OURS = REPO / "tests" / "corpus"
MANUAL = REPO / "docs" / "how-to" / "formats.md"
HDR = 1e-3   # 3 significant digits


def _files(root: Path) -> list[tuple[str, Path]]:
    if not root.exists():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name in oracle.FORMAT_OF_DIR):
        out += [(folder.name, p) for p in sorted(folder.rglob("*")) if oracle.is_corpus_file(p)]
    return out


def corpus() -> list[tuple[str, str, Path]]:
    """(id, format folder, path) of every corpus file."""
    return ([(f"real/{p.relative_to(REAL)}", d, p) for d, p in _files(REAL)]
            + [(f"ours/{p.relative_to(OURS)}", d, p) for d, p in _files(OURS)])


CORPUS = corpus()


def test_the_corpus_is_there() -> None:
    if not REAL.exists():
        pytest.fail(f"shared fixture corpus not found at {REAL}: set BENCHTRAIL_SHARED_DIR or clone shared/ beside "
                    "the repository")
    assert len(CORPUS) >= 150, len(CORPUS)
    unknown = sorted(p.name for p in REAL.iterdir() if p.is_dir() and p.name not in oracle.FORMAT_OF_DIR)
    assert unknown == [], f"folders of shared/fixtures/real with no oracle: {unknown}"


@pytest.mark.parametrize("folder,path", [pytest.param(d, p, id=i) for i, d, p in CORPUS])
def test_corpus_file(folder: str, path: Path) -> None:
    check(folder, path)


def check(folder: str, path: Path) -> str:
    """Compare one file; returns 'read' or 'refused'."""
    exp = oracle.expected(folder, path)
    assert (exp.refused is None) == (oracle.refusal(folder, path) is None)
    if exp.refused is not None:
        with pytest.raises(ParseError) as exc:
            ingest_file(path)
        assert exp.refused in str(exc.value)
        return "refused"
    assert detect_format(path) == exp.format
    if exp.entries is not None:      # a history: one run per entry, each read through the same path
        from benchtrail.ingest.model import ParseOptions
        for entry in range(exp.entries):
            parsed, _ = ingest_file(path, options=ParseOptions(entry=entry))
            assert parsed.reported
        with pytest.raises(ParseError, match="import it"):
            ingest_file(path)
        return "read"
    parsed, result = ingest_file(path)
    assert parsed.format == exp.format
    if exp.scenarios or exp.whole:
        _samples(exp, result)
    if exp.reported:
        _reported(exp, parsed.reported)
    if exp.scores:
        _scores(exp, parsed.reported)
    if exp.series_points is not None:
        [tp] = [s for s in result.series if s.metric == "throughput" and s.scenario is None]
        assert len(tp.t_ms) == exp.series_points
    return "read"


def _merged(cells: list) -> dict[str, float]:
    """Cells of one scenario over its load levels, as one: counts add, min/max/mean exact."""
    n = sum(c.stats["count"] for c in cells)
    return {"count": n, "errors": sum(c.stats["errors"] for c in cells),
            "latency_min": min(c.stats["latency_min"] for c in cells),
            "latency_max": max(c.stats["latency_max"] for c in cells),
            "latency_mean": sum(c.stats["latency_mean"] * c.stats["count"] for c in cells) / n,
            **({k: cells[0].stats[k] for k in ("latency_p50", "latency_p99")} if len(cells) == 1 else {})}


def _close(got: dict[str, float], exp: dict[str, float], where: str) -> None:
    assert got["count"] == exp["count"], where
    assert got["errors"] == exp["errors"], where
    for key in ("latency_min", "latency_max"):
        assert got[key] == pytest.approx(exp[key], abs=1e-9), (where, key)
    assert got["latency_mean"] == pytest.approx(exp["latency_mean"], rel=1e-9), where
    for key in ("latency_p50", "latency_p99"):
        if key in got:
            assert abs(got[key] - exp[key]) <= exp[key] * HDR + 1e-3, (where, key, got[key], exp[key])


def _samples(exp: oracle.Expected, result) -> None:
    by: dict[str | None, list] = defaultdict(list)
    for c in result.cells:
        by[c.scenario].append(c)
    assert sum(c.stats["count"] for c in by[None]) == exp.total
    if exp.whole:
        _close(_merged(by[None]), exp.whole, "all scenarios")
    if exp.check_names:
        assert set(by) - {None} == set(exp.scenarios)
        for scenario, stats in exp.scenarios.items():
            _close(_merged(by[scenario]), stats, scenario)


def _reported(exp: oracle.Expected, cells: list) -> None:
    whole = [c for c in cells if c.scenario is None] or cells
    assert len(whole) == 1, [c.scenario for c in cells]
    for key, value in exp.reported.items():
        assert whole[0].stats.get(key) == pytest.approx(value, rel=1e-9), key


def _scores(exp: oracle.Expected, cells: list) -> None:
    got: dict[str, list[float]] = defaultdict(list)
    if set(exp.scores) == {"*"}:
        got["*"] = sorted(c.stats["score"] for c in cells)
    elif exp.format in ("hey-text", "wrk-text"):     # several runs per file: each run's printed totals
        got = {k: sorted(c.stats[k] for c in cells) for k in exp.scores}
    else:
        for c in cells:
            got[c.mode].append(c.stats["score"])
        got = {k: sorted(v) for k, v in got.items()}
    assert set(got) == set(exp.scores)
    for mode, values in exp.scores.items():
        assert len(got[mode]) == len(values), mode
        for g, e in zip(got[mode], values):
            assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e, rel=1e-9, abs=1e-12), (mode, g, e)


def test_the_manual_states_the_corpus_figure() -> None:
    files = len(CORPUS)
    refused = sum(1 for _, d, p in CORPUS if oracle.refusal(d, p) is not None)
    text = MANUAL.read_text(encoding="utf-8")
    m = re.search(r"(\d+) files, (\d+) read exactly, (\d+) refused with a reason", text)
    assert m, "docs/how-to/formats.md states the corpus figure"
    assert tuple(int(x) for x in m.groups()) == (files, files - refused, refused), \
        f"the manual says {m.group(0)!r}; the corpus is {files} files, {files - refused} read, {refused} refused"

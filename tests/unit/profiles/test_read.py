"""The stored weights of real profiles against the same profiles read independently: Go's own
`go tool pprof -top` (flat and cum per function), the JDK's `jfr summary` / `jfr print` (sample counts and
each sample's top frame), and the collapsed text summed here. The fixtures are profiles real tools wrote on
this machine: the Go demo target with its tracer under hey (net/http/pprof), the Java demo service with the
OpenTelemetry agent under hey (JFR with the runner's settings; async-profiler's collapsed output)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from benchtrail.ingest.model import ParseError
from benchtrail.profiles import tree
from benchtrail.ingest.parsers.profiles import jvm_name, read_collapsed, read_document, read_pprof
from benchtrail_runner.profiling import read_jfr

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "profiles"
GO = FIXTURES / "go-demo-traced.pb.gz"
JFR = FIXTURES / "java-demo-agent.jfr"
COLLAPSED = FIXTURES / "java-demo-agent.collapsed.txt"


def _rep(stacks, requests: int = 1000) -> tree.Rep:
    return tree.Rep(stacks.frames, stacks.stacks, stacks.weights, requests, 0)


def _go_top() -> tuple[float, dict[str, tuple[float, float]]]:
    """(total ms, {function: (flat ms, cum ms)}) as Go's pprof prints them."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("the Go toolchain is not installed: infra/scripts/bootstrap.sh --tools installs it")
    out = subprocess.run([go, "tool", "pprof", "-top", "-nodecount=100000", "-unit=ms", str(GO)],
                         capture_output=True, text=True, check=True).stdout
    total = float(re.search(r"Total samples = ([\d.]+)ms", out).group(1))
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^\s*([\d.]+)(?:ms)?\s+[\d.]+%\s+[\d.]+%\s+([\d.]+)(?:ms)?\s+[\d.]+%\s+(.+?)( \((?:partial-)?inline\))?$", line)
        if m:
            rows[m.group(3)] = (float(m.group(1)), float(m.group(2)))
    return total, rows


def test_go_profile_weights_match_go_tool_pprof():
    total, top = _go_top()
    stacks = read_pprof(GO)
    assert stacks.cpu_ms == pytest.approx(total)
    assert stacks.samples * 10 == pytest.approx(total)        # 100 Hz: each sample 10 ms
    # Per 1,000 requests with 1,000 requests: the values are CPU ms as pprof prints them.
    t = tree.totals([_rep(stacks)])
    assert t.whole == [pytest.approx(total)]
    assert set(t.frame_total) == set(top)
    for name, (flat, cum) in top.items():
        assert t.frame_self.get(name, [0.0])[0] == pytest.approx(flat, abs=1e-9), name
        assert t.frame_total[name][0] == pytest.approx(cum, abs=1e-9), name


def _jfr_samples() -> list[tuple[str, str]]:
    """(startTime as printed, top frame) of every execution sample, from `jfr print`'s text."""
    jfr = shutil.which("jfr")
    if jfr is None:
        pytest.fail("the JDK's jfr is not installed: infra/scripts/bootstrap.sh installs the JDK")
    text = subprocess.run([jfr, "print", "--events", "jdk.ExecutionSample", str(JFR)], capture_output=True,
                          text=True, check=True).stdout
    out = []
    for event in text.split("jdk.ExecutionSample {")[1:]:
        start = re.search(r"startTime = (\S+)", event).group(1)
        frames = event.split("stackTrace = [", 1)[1].strip().splitlines()
        out.append((start, frames[0].strip().split("(", 1)[0]))
    return out


def test_jfr_stacks_match_jfr_print(tmp_path):
    summary = subprocess.run([shutil.which("jfr") or "jfr", "summary", str(JFR)], capture_output=True, text=True,
                             check=True).stdout
    count = int(re.search(r"jdk\.ExecutionSample\s+(\d+)", summary).group(1))
    samples = _jfr_samples()
    assert len(samples) == count > 0
    doc = read_jfr(JFR, tmp_path / "stacks.json")   # the runner's reading (jfr print --json)
    stacks = read_document(doc)
    assert stacks.samples == count and stacks.outside_window == 0
    assert stacks.cpu_ms == pytest.approx(count * 10.0)      # each sample: one 10 ms period
    expected = Counter(jvm_name(top) for _, top in samples)
    got = tree.totals([_rep(stacks)]).frame_self
    assert {name: row[0] for name, row in got.items()} == pytest.approx({k: v * 10.0 for k, v in expected.items()})


def test_jfr_window_leaves_out_samples_outside_the_load(tmp_path):
    doc = read_jfr(JFR, tmp_path / "stacks.json")
    everything = read_document(doc)
    lo, hi = everything.span_ms
    middle = (lo + hi) / 2
    first_half = read_document(doc, (lo, middle))
    second_half = read_document(doc, (middle + 1e-6, hi))
    assert first_half.samples + second_half.samples == everything.samples
    assert first_half.outside_window == second_half.samples
    assert 0 < first_half.samples < everything.samples


def test_collapsed_stacks_weigh_their_counts_times_the_period():
    lines = [line.rsplit(" ", 1) for line in COLLAPSED.read_text().splitlines() if line.strip()]
    stacks = read_collapsed(COLLAPSED, "jvm", 10.0)
    assert stacks.samples == sum(int(n) for _, n in lines)
    assert stacks.cpu_ms == pytest.approx(10.0 * sum(int(n) for _, n in lines))
    # JVM frames are named package.Class.method; kernel frames stay as they are
    assert any(f.startswith("dev.benchtrail.demo.DemoService.") for f in stacks.frames)
    assert all("/" not in f for f in stacks.frames if not f.endswith("_[k]") and not f.startswith("["))
    assert any(f.startswith("io.opentelemetry.") for f in stacks.frames)


def test_per_1000_requests_normalisation_is_exact():
    """Two repetitions of different lengths and request counts: the flame graph's root is the mean of
    cpu_ms x 1000 / requests, computed here with exact fractions."""
    stacks = read_pprof(GO)
    reps = [tree.Rep(stacks.frames, stacks.stacks, stacks.weights, 12_345, 0),
            tree.Rep(stacks.frames, stacks.stacks[:5], stacks.weights[:5], 777, 2)]
    expected = (Fraction(sum(Fraction(w) for w in stacks.weights)) * 1000 / 12_345
                + Fraction(sum(Fraction(w) for w in stacks.weights[:5])) * 1000 / 777) / 2
    flame = tree.flame(reps)
    assert flame.total == pytest.approx(float(expected), rel=1e-12)
    root = flame.nodes[0]
    assert root.name == "all" and root.total == flame.total


@pytest.mark.parametrize("text, why", [
    ("a;b;c x\n", "not a collapsed stack"),
    ("a;b;c\n", "not a collapsed stack"),
])
def test_bad_collapsed_lines_are_refused_with_their_line(tmp_path, text, why):
    path = tmp_path / "p.txt"
    path.write_text("a;b 3\n" + text)
    with pytest.raises(ParseError) as exc:
        read_collapsed(path, "jvm", 10.0)
    assert exc.value.line == 2 and why in exc.value.reason


def test_a_non_cpu_pprof_is_refused(tmp_path):
    path = tmp_path / "x.pb"
    path.write_bytes(b"\x0a\x04\x08\x01\x10\x02")   # one sample_type {type: 1, unit: 2}, no string table
    with pytest.raises(ParseError) as exc:
        read_pprof(path)
    assert exc.value.field == "string_table"


def test_a_document_with_a_stack_past_its_frames_is_refused(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{"format": "benchtrail-profile", "version": 1, "runtime": "jvm", "period_ms": 10, '
                    '"frames": ["a"], "stacks": [[0, 1]], "samples": {"stack": [0]}}')
    with pytest.raises(ParseError) as exc:
        read_document(path)
    assert exc.value.field == "stacks[0]"

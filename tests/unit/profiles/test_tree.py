"""Frames grouped by package, and the intervals of the frames' differences against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from benchtrail.profiles import frames, tree


@pytest.mark.parametrize("frame, group, agent", [
    ("io.opentelemetry.javaagent.bootstrap.Java8BytecodeBridge.currentContext", "io.opentelemetry.javaagent", True),
    ("io.opentelemetry.sdk.trace.SdkSpan.end", "io.opentelemetry.sdk", True),
    ("com.megaease.easeagent.plugin.Foo.bar", "com.megaease.easeagent", True),
    ("go.opentelemetry.io/otel/sdk/trace.(*tracer).Start", "go.opentelemetry.io", True),
    ("dev.benchtrail.demo.DemoService$Repository.find", "dev.benchtrail.demo", False),
    ("java.util.zip.CRC32.updateBytes", "java.util.zip", False),
    ("net/http.(*conn).serve", "net/http", False),
    ("github.com/foo/bar/baz/qux.Run", "github.com/foo/bar", False),
    ("runtime.mallocgc", "runtime", False),
    ("do_syscall_64_[k]", "[kernel]", False),
    ("JavaThread::thread_main_inner()", "[native]", False),
    ("epoll_wait", "[native]", False),
    ("main.(*tracer).record", "main", False),
    ("sync.(*Mutex).Lock", "sync", False),
    ("[truncated stack]", "[truncated stack]", False),
])
def test_frames_are_grouped_by_package_prefix(frame, group, agent):
    assert frames.group(frame) == (group, agent)


def test_the_plans_agent_names_mark_frames_that_contain_them():
    name = "main.main.(*tracer).middleware.func8"
    assert frames.group(name) == ("main", False)
    assert frames.group(name, ["(*tracer)"]) == ("(*tracer)", True)


def _reps(values: list[float], position0: int) -> list[tree.Rep]:
    """Repetitions of two stacks: main -> work (weight v) and main -> agent.Span.end (weight 2v)."""
    names = ["main", "app.Work.run", "io.opentelemetry.sdk.trace.SdkSpan.end"]
    return [tree.Rep(names, [[0, 1], [0, 2]], [v, 2 * v], 1000, position0 + 2 * i) for i, v in enumerate(values)]


def test_rows_carry_t_intervals_over_the_repetitions():
    ref, var = [1.0, 1.2, 0.9], [1.5, 1.9, 1.4]
    groups, rows = tree.rows(_reps(ref, 0), _reps(var, 1))
    [agent_group] = [g for g in groups if g.agent]
    assert agent_group.name == "io.opentelemetry.sdk"
    a, b = np.array(ref) * 2, np.array(var) * 2
    ci = sps.ttest_ind(b, a).confidence_interval()
    assert agent_group.total.abs_diff == pytest.approx(b.mean() - a.mean())
    assert (agent_group.total.ci_low, agent_group.total.ci_high) == pytest.approx((ci.low, ci.high))
    whole = tree.whole_difference(_reps(ref, 0), _reps(var, 1))
    a3, b3 = np.array(ref) * 3, np.array(var) * 3
    ci3 = sps.ttest_ind(b3, a3).confidence_interval()
    assert (whole.ci_low, whole.ci_high) == pytest.approx((ci3.low, ci3.high))
    main = next(r for r in rows if r.name == "main")
    assert main.self_.abs_diff == 0 and main.total.abs_diff == pytest.approx(whole.abs_diff)


def test_five_interleaved_pairs_are_paired():
    ref, var = [1.0, 1.2, 0.9, 1.1, 1.3], [1.5, 1.9, 1.4, 1.5, 1.8]
    whole = tree.whole_difference(_reps(ref, 0), _reps(var, 1))
    assert whole.method == "paired-t-repetitions"
    ci = sps.ttest_rel(np.array(var) * 3, np.array(ref) * 3).confidence_interval()
    assert (whole.ci_low, whole.ci_high) == pytest.approx((ci.low, ci.high))


def test_differential_flame_graph_shows_each_nodes_difference():
    flame = tree.differential(_reps([1.0, 1.0], 0), _reps([1.5, 2.5], 1))
    by_name = {n.name: n for n in flame.nodes}
    assert by_name["all"].total == pytest.approx(6.0) and by_name["all"].reference_total == pytest.approx(3.0)
    assert by_name["io.opentelemetry.sdk.trace.SdkSpan.end"].delta_total == pytest.approx(2.0)
    assert by_name["io.opentelemetry.sdk.trace.SdkSpan.end"].agent
    assert by_name["app.Work.run"].delta_self == pytest.approx(1.0)

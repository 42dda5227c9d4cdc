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


def test_attributed_cpu_goes_to_the_agent_code_on_a_stack_else_to_the_running_code():
    """Each stack's CPU counted once: under agent code to the agent; a native leaf to its caller's package; a
    thread with no Java frame (a JIT compiler) to its thread. The groups add up to the whole."""
    names = ["[pool-3-thread]", "java.lang.Thread.run", "io.opentelemetry.sdk.trace.SdkSpan.end", "sun.nio.ch.IOUtil.write",
             "write_[k]", "app.Work.run", "epoll_wait", "[C2 CompilerThread]", "PhaseIdealLoop::build_loop_late"]
    stacks = [[0, 1, 2, 3, 4], [0, 1, 5, 6], [7, 8], [0, 1, 5]]
    weights = [4.0, 2.0, 3.0, 1.0]
    t = tree.totals([tree.Rep(names, stacks, weights, 1000, 0)])
    assert {g: v[0] for g, v in t.group_attributed.items()} == {
        "io.opentelemetry.sdk": 4.0, "app": 3.0, "[C2 CompilerThread]": 3.0}
    assert sum(v[0] for v in t.group_attributed.values()) == t.whole[0] == 10.0


def test_async_profiler_thread_roots_are_named_by_their_kind(tmp_path):
    from benchtrail.ingest.parsers.profiles import read_collapsed

    path = tmp_path / "c.txt"
    path.write_text("[C2 CompilerThread0 tid=4711];Compile::Compile 3\n[C2 CompilerThread1 tid=4712];Compile::Compile 2\n"
                    "[pool-3-thread-27 tid=99];java/lang/Thread.run;dev/benchtrail/demo/DemoService$$Lambda$314.0x00007ffa182b0428.handle 5\n")
    stacks = read_collapsed(path, "jvm", 10.0)
    assert stacks.frames == ["[C2 CompilerThread]", "Compile::Compile", "[pool-3-thread]", "java.lang.Thread.run",
                             "dev.benchtrail.demo.DemoService$$Lambda.handle"]
    assert stacks.weights == [50.0, 50.0]

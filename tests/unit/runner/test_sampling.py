from __future__ import annotations

import urllib.request
from pathlib import Path

from benchtrail.plans.model import load_plan, steps
from benchtrail_runner.sampling import PrometheusSource, ResourceSampler, pid_listening_on, sampling
from benchtrail_runner.tools import run_step

from tests.support.runner import Target, proc_cpu_s, proc_rss_mb, require_tool


def test_process_sampling_matches_proc(target: Target, tmp_path: Path) -> None:
    require_tool("hey")
    assert pid_listening_on(target.port) == target.proc.pid
    plan = load_plan(f"""
version: 1
name: sampling
tool: hey
variants:
  - {{name: a, target: "{target.url}", resources: {{source: process}}}}
scenarios: [{{name: ok, path: /ok}}]
loads: [{{concurrency: 8, requests: 30000}}]
sampling: {{interval_s: 0.1}}
""")   # a count of requests, not a duration: the target does the same work however busy the machine is (2.5 s at
       # 8 connections gave it 0.12 CPU-seconds once in make test, beside the other test processes)
    pid = target.proc.pid
    cpu_before = proc_cpu_s(pid)
    with sampling(plan.variants, plan.sampling.interval_s) as samplers:
        run = run_step(plan, steps(plan)[0], tmp_path)
        summary = samplers["a"].stop(requests=run.outputs[0].summary.count)
    cpu_after = proc_cpu_s(pid)
    rss_now = proc_rss_mb(pid)
    independent_cpu = cpu_after - cpu_before
    # /proc ticks are 10 ms; the sampler's window sits inside the independent one
    assert independent_cpu > 0.2, "the target should have worked under load"
    assert abs(summary.cpu_s - independent_cpu) <= 0.05 + 0.05 * independent_cpu
    assert len(summary.points) >= 4
    assert abs(summary.cpu_pct_mean - 100 * summary.cpu_s / summary.window_s) < 1e-6
    assert summary.rss_mb_max is not None and abs(summary.rss_mb_max - rss_now) / rss_now < 0.5
    assert summary.cpu_s_per_1k == 1000 * summary.cpu_s / run.outputs[0].summary.count
    assert summary.heap_mb_mean is None


def test_prometheus_sampling_of_java_demo(java_demo: Target) -> None:
    src = PrometheusSource(f"{java_demo.url}/metrics")
    pid = java_demo.proc.pid
    cpu_before = proc_cpu_s(pid)
    sampler = ResourceSampler("baseline", src, 0.25).start()
    for _ in range(300):
        urllib.request.urlopen(f"{java_demo.url}/api/vet/vets", timeout=5).read()
    summary = sampler.stop(requests=300)
    cpu_after = proc_cpu_s(pid)
    rss = proc_rss_mb(pid)
    assert 0 < summary.cpu_s <= (cpu_after - cpu_before) + 0.05
    assert summary.heap_mb_max is not None and 0 < summary.heap_mb_max <= 128
    assert summary.rss_mb_max is not None and abs(summary.rss_mb_max - rss) / rss < 0.25
    assert summary.points and all(p.heap_mb is not None for p in summary.points)

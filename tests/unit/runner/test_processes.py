"""A variant's named processes (plan `processes`): where each is found, how its readings travel to
ingest as its own cells, and what a plan may say about them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchtrail.ingest.detect import parse_file
from benchtrail.plans.model import PlanError, load_plan, steps
from benchtrail.targets import plan_problems
from benchtrail_runner.execute import PlanResult, StepResult
from benchtrail_runner.report import resources_document
from benchtrail_runner.sampling import (Reading, ResourceSampler, SamplingError, parse_prometheus,
                                      pid_of_command, process_source, summarize)

from infra.localstack import wait_until

from tests.support.runner import Target, proc_cpu_s

PLAN = """
version: 1
name: pts
tool: constant-rate
variants:
  - name: no-agent
    role: reference
    target: http://127.0.0.1:18093
    processes:
      - {name: consumer, port: 18093}
      - {name: provider, command: "-addr 127.0.0.1:18094"}
  - name: agent
    target: http://127.0.0.1:18095
    processes:
      - {name: consumer, pid: 4242}
      - {name: provider, url: "http://127.0.0.1:18096/metrics"}
scenarios: [{name: echo, path: /echo}]
loads: [{rate: 1000, duration_s: 5}]
"""


def test_each_kind_of_process_source_finds_the_real_process(target: Target) -> None:
    from benchtrail.plans.model import Process

    pid = target.proc.pid
    assert pid_of_command(f"-addr 127.0.0.1:{target.port}") == pid
    for p in (Process(name="a", pid=pid), Process(name="b", port=target.port),
              Process(name="c", command=f"127.0.0.1:{target.port}")):
        src = process_source(p)
        assert src.process.pid == pid  # type: ignore[attr-defined]
        reading = src.read()
        assert abs(reading.cpu_s - proc_cpu_s(pid)) < 0.05
    with pytest.raises(SamplingError, match="no process on this host; exactly one must match"):
        pid_of_command("no-such-command-line-xyz-0012")


def test_command_matching_several_processes_is_refused() -> None:
    import os
    import subprocess

    from tests.support.runner import free_port, require_tool, wait_http

    marker = f"-slow {os.getpid()}us"   # a command-line text only these two processes have
    procs, ports = [], [free_port(), free_port()]
    try:
        for port in ports:
            procs.append(subprocess.Popen([require_tool("benchtrail-demo-target"), "-addr", f"127.0.0.1:{port}",
                                           *marker.split()]))
            wait_http(f"http://127.0.0.1:{port}/ok", 10)
        with pytest.raises(SamplingError, match=rf"'{marker}': 2 processes \(pids {procs[0].pid}, {procs[1].pid}\)"):
            pid_of_command(marker)
        assert pid_of_command(f"127.0.0.1:{ports[1]} {marker}") == procs[1].pid
    finally:
        for p in procs:
            p.terminate()
            p.wait(5)


def test_go_heap_is_read_from_a_prometheus_endpoint() -> None:
    text = ("process_cpu_seconds_total 12.5\nprocess_resident_memory_bytes 4.194304e+07\n"
            "go_memstats_heap_alloc_bytes 2.097152e+06\n")
    r = parse_prometheus(text, t=1.0)
    assert (r.cpu_s, r.rss_bytes, r.heap_bytes) == (12.5, 41943040.0, 2097152.0)


class _Fake:
    name = "process"

    def __init__(self, readings: list[Reading]) -> None:
        self.readings = readings

    def read(self) -> Reading:
        return self.readings.pop(0)


def test_processes_travel_as_their_own_cells_in_the_resources_document(tmp_path: Path) -> None:
    plan = load_plan(PLAN.replace("loads: [{rate: 1000, duration_s: 5}]", "loads: [{rate: 1000, duration_s: 5}]\n"
                                  "repetitions: 2"))
    measured = [s for s in steps(plan) if s.phase == "measure"]
    results = []
    for i, step in enumerate(measured):
        v = step.variants[0]
        procs = {}
        for j, name in enumerate(("consumer", "provider")):
            # CPU: 0.5 s + 0.1 s per step over 2 s -> 25%, 30%, ...; RSS 40 MB then 50 MB
            readings = [Reading(100.0, 1.0, 40 * 2**20), Reading(101.0, 1.0 + (0.5 + 0.1 * i + j) / 2, 45 * 2**20),
                        Reading(102.0, 1.5 + 0.1 * i + j, 50 * 2**20)]
            procs[(v, name)] = summarize(f"{v}/{name}", "process", readings, requests=2000)
        results.append(StepResult(step, None, processes=procs))
    doc = resources_document(PlanResult(plan, results))
    assert doc is not None
    path = tmp_path / "resources.benchtrail.json"
    path.write_text(json.dumps(doc))
    parsed = parse_file(path, format="benchtrail-json")
    cells = [(c.variant, c.process, round(c.stats["cpu_pct"], 6), c.stats["rss_mb"]) for c in parsed.reported]
    # by variant, then step order: CPU 25 + 5 x step index + 50 (provider) %, RSS mean of 40, 45, 50 MB
    assert cells == [("no-agent", "consumer", 25.0, 45.0), ("no-agent", "provider", 75.0, 45.0),
                     ("no-agent", "consumer", 35.0, 45.0), ("no-agent", "provider", 85.0, 45.0),
                     ("agent", "consumer", 30.0, 45.0), ("agent", "provider", 80.0, 45.0),
                     ("agent", "consumer", 40.0, 45.0), ("agent", "provider", 90.0, 45.0)]
    assert all(c.scenario is None for c in parsed.reported)
    assert {(s.variant, s.process, s.metric) for s in parsed.series} >= {("agent", "provider", "cpu_pct"),
                                                                         ("no-agent", "consumer", "rss_mb")}


def test_a_sampler_of_a_process_reads_it_over_time(target: Target) -> None:
    from benchtrail.plans.model import Process

    sampler = ResourceSampler("a/consumer", process_source(Process(name="consumer", port=target.port)), 0.1).start()
    # start() takes the first reading; wait until the sampler's thread has taken two more
    wait_until(lambda: len(sampler.readings) >= 3, 10, "the sampler to read the process twice")
    summary = sampler.stop()
    assert summary.source == "process" and len(summary.points) >= 2 and summary.rss_mb_mean


def test_plan_rules_for_processes() -> None:
    plan = load_plan(PLAN)
    assert [p.name for p in plan.variants[1].processes] == ["consumer", "provider"]
    with pytest.raises(PlanError) as err:
        load_plan(PLAN.replace("{name: consumer, pid: 4242}", "{name: consumer, pid: 4242, port: 1}"))
    assert err.value.problems == [("variants[1].processes[0]",
                                   "a process needs exactly one of pid, command, port or url")]
    with pytest.raises(PlanError) as err:
        load_plan(PLAN.replace("{name: provider, command", "{name: consumer, command"))
    assert err.value.problems == [("variants[0].processes[1].name", "duplicate process name 'consumer'")]
    with pytest.raises(PlanError) as err:
        load_plan(PLAN.replace("{name: consumer, pid: 4242}", "{name: Consumer!, pid: 4242}"))
    assert err.value.problems[0][0] == "variants[1].processes[0].name"
    import yaml

    body = yaml.safe_load(PLAN)
    assert plan_problems(body, ["127.0.0.1:18093", "127.0.0.1:18095"], []) == [
        ("variants[1].processes[1].url", "process metrics URL 'http://127.0.0.1:18096/metrics' is not in the "
         "target allow-list (BENCHTRAIL_TARGET_ALLOWLIST=127.0.0.1:18093,127.0.0.1:18095)")]
    body["variants"][0]["target"] = "http://10.0.0.7:18093"
    problems = plan_problems(body, ["*"], [])
    assert [p[0] for p in problems] == ["variants[0].processes[0]", "variants[0].processes[1]"]
    assert "runner's own host" in problems[0][1]

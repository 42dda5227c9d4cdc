"""`make bench-profile`: what profiling costs, and whether a profile explains the CPU the agent adds.

On the Java demo (infra/demo/start-java.sh: the service without and with the OpenTelemetry agent), with the
runner's own profiler code (`benchtrail_runner.profiling`, async-profiler loaded with jcmd; BENCH_PROFILER=jfr
for JDK Flight Recorder) and the server's reading of its output (`benchtrail.profiles`), in one process:

1. Profiler cost: the agent service loaded by hey with and without the profiler, interleaved (off/on, then
   on/off, ...), after a warm-up of both services with the profiler loaded once; profiler_overhead_pct =
   100 x (1 - the median over pairs of on/off throughput) (the median: on a shared machine one pair can be
   hit by someone else's burst). The CPU per request on against off is printed too.
2. Attribution gap: each repetition profiles baseline and agent while the process's CPU is sampled (psutil),
   both per 1,000 requests; the profiles' added CPU (agent minus baseline) against the sampled CPU's:
   attribution_gap_pct = 100 x |profile delta - sampled delta| / sampled delta.

BENCH_SMOKE=1: one short repetition of everything (the whole path, quickly; `make test` runs it).
Last line: RESULT profiler_overhead_pct=<x> attribution_gap_pct=<y> profiler_cpu_pct=<z> (targets <= 3 and <= 25;
z: the profiler's cost in CPU per request, which a machine shared with other work disturbs far less than
throughput)
"""

from __future__ import annotations

import csv
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psutil  # noqa: E402

from benchtrail.profiles import tree  # noqa: E402
from benchtrail.ingest.parsers.profiles import read_collapsed, read_document  # noqa: E402
from benchtrail_runner.plan import Profile, Variant  # noqa: E402
from benchtrail_runner.profiling import StepProfiles, finish  # noqa: E402
from infra.localstack import free_port  # noqa: E402
from sizes import SMOKE, announce, size  # noqa: E402

TOOLS = Path(os.environ.get("BENCHTRAIL_TOOLS_DIR", REPO / ".tools"))
PROFILER = os.environ.get("BENCH_PROFILER", "async-profiler")
SECONDS = size(4, smoke=1)
REPS = size(10, smoke=1)
# A JVM with the agent keeps compiling for a minute on 2 busy cores: measured pairs before that compare a
# colder service with a warmer one.
WARMUP_S = size(45, smoke=1)
CONCURRENCY = 2
PATH = "/api/vet/vets"


def hey(url: str, out: Path, seconds: float = SECONDS) -> tuple[int, float]:
    """(requests, throughput = requests / (last end - first start)) of a hey run."""
    exe = TOOLS / "bin" / "hey"
    with out.open("wb") as f:
        subprocess.run([str(exe) if exe.exists() else "hey", "-z", f"{seconds:g}s", "-c", str(CONCURRENCY),
                        "-o", "csv", url + PATH], stdout=f, check=True)
    starts, ends = [], []
    with out.open() as f:
        for row in csv.DictReader(f):
            starts.append(float(row["offset"]))
            ends.append(float(row["offset"]) + float(row["response-time"]))
    assert starts, f"hey got no answer from {url}"
    return len(starts), len(starts) / (max(ends) - min(starts))


def cpu_s(pid: int) -> float:
    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def measured(name: str, url: str, pid: int, workdir: Path, step: int, profiled: bool) -> dict[str, float]:
    """One hey run against a service: its throughput, sampled CPU-ms per 1k requests and, when profiled, the
    profile's CPU-ms per 1k requests."""
    variant = Variant(name=name, target=url, profile=Profile(runtime="jvm", profiler=PROFILER))
    running = StepProfiles([variant], 1, workdir, step, float(SECONDS)) if profiled else None
    before = cpu_s(pid)
    requests, rate = hey(url, workdir / f"{step}-{name}.csv")
    used = cpu_s(pid) - before
    out = {"rate": rate, "sampled": used * 1e6 / requests}
    if running is not None:
        files = [f for f in finish(running.stop()) if f.format in ("collapsed", "benchtrail-profile")]
        stacks = read_collapsed(files[0].path, "jvm", 10.0) if files[0].format == "collapsed" \
            else read_document(files[0].path)
        out["profile"] = tree.totals([tree.Rep(stacks.frames, stacks.stacks, stacks.weights, requests, step)]).whole[0]
    return out


def main() -> int:
    announce("bench-profile")
    workdir = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    ports = (free_port(), free_port(), free_port())
    env = {**os.environ, "DEMO_BASELINE_PORT": str(ports[0]), "DEMO_AGENT_PORT": str(ports[1]),
           "DEMO_OTLP_PORT": str(ports[2]), "BENCHTRAIL_TOOLS_DIR": str(TOOLS), "DEMO_RUN_DIR": str(workdir / "run"),
           "DEMO_WARMUP_S": str(size(20, smoke=3)), "PATH": f"{TOOLS / 'bin'}:{os.environ.get('PATH', '')}"}
    subprocess.run([str(REPO / "infra/demo/start-java.sh")], env=env, check=True, stdout=subprocess.DEVNULL)
    try:
        pids = {name: int((workdir / "run" / f"demo-{name}.pid").read_text()) for name in ("baseline", "agent")}
        urls = {"baseline": f"http://127.0.0.1:{ports[0]}", "agent": f"http://127.0.0.1:{ports[1]}"}
        for name in ("baseline", "agent"):   # JIT-compile both, the profiler loaded once in each
            variant = Variant(name=name, target=urls[name], profile=Profile(runtime="jvm", profiler=PROFILER))
            running = StepProfiles([variant], 1, workdir, 999, float(WARMUP_S))
            hey(urls[name], workdir / f"warmup-{name}.csv", WARMUP_S)
            running.stop()
        ratios, cpu_ratios, profile_delta, sampled_delta, coverage = [], [], [], [], []
        step = 0
        for rep in range(REPS):
            # off/on of the same variant, alternating which goes first, then baseline profiled
            order = (False, True) if rep % 2 == 0 else (True, False)
            runs = {}
            for profiled in order:
                runs[profiled] = measured("agent", urls["agent"], pids["agent"], workdir, step, profiled)
                step += 1
            base = measured("baseline", urls["baseline"], pids["baseline"], workdir, step, True)
            step += 1
            ratios.append(runs[True]["rate"] / runs[False]["rate"])
            cpu_ratios.append(runs[True]["sampled"] / runs[False]["sampled"])
            profile_delta.append(runs[True]["profile"] - base["profile"])
            sampled_delta.append(runs[True]["sampled"] - base["sampled"])
            coverage.append(runs[True]["profile"] / runs[True]["sampled"])
            print(f"rep {rep + 1}: throughput off {runs[False]['rate']:.0f}/s on {runs[True]['rate']:.0f}/s; "
                  f"added CPU-ms/1k: profile {profile_delta[-1]:.1f}, sampled {sampled_delta[-1]:.1f}; "
                  f"profile saw {100 * coverage[-1]:.0f}% of the agent process's CPU", flush=True)
        overhead = 100.0 * (1.0 - statistics.median(ratios))
        print(f"profiler on against off, same variant: throughput {100 * (statistics.median(ratios) - 1):+.1f}% "
              f"(median of {len(ratios)} pairs: {', '.join(f'{100 * (r - 1):+.0f}%' for r in ratios)}), "
              f"CPU per request {100 * (statistics.median(cpu_ratios) - 1):+.1f}%")
        p, s = statistics.fmean(profile_delta), statistics.fmean(sampled_delta)
        gap = 100.0 * abs(p - s) / abs(s) if s else float("nan")
        print(f"profiler {PROFILER}, {REPS} repetition(s) of {SECONDS} s at {CONCURRENCY} connections"
              f"{' (smoke)' if SMOKE else ''}: added CPU per 1,000 requests, profile {p:.1f} ms vs sampled {s:.1f} ms; "
              f"the profile saw {100 * statistics.fmean(coverage):.0f}% of the agent process's CPU")
        cpu_cost = 100.0 * (statistics.median(cpu_ratios) - 1.0)
        print(f"RESULT profiler_overhead_pct={overhead:.2f} attribution_gap_pct={gap:.1f} profiler_cpu_pct={cpu_cost:.2f}")
        return 0
    finally:
        subprocess.run([str(REPO / "infra/demo/stop-java.sh")], env=env, check=False)


if __name__ == "__main__":
    raise SystemExit(main())

"""Load-tool adapters: the exact argument list for each tool from a plan step, running it
(process.run_together), progress while it runs, and success decided from the output files.

Simultaneous order runs one load-generator process per variant, all started together: each raw
output then belongs to exactly one variant (what an upload needs) and has the same format as a
single-variant run. hey takes one URL per process, so it runs one process per (variant, scenario).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import outputs
from .jmx import JTL_PROPERTIES, build_jmx
from .outputs import OutputSummary
from .plan import Load, Plan, Scenario, Step, Variant, step_scenarios
from .process import Finished, Launch, ToolError, run_together

_REPO = Path(__file__).resolve().parents[3]
TOOLS_DIR_ENV = "BENCHTRAIL_TOOLS_DIR"
INSTALL_HINT = "run infra/tools/install.sh"
_PROGRESS_EVERY_S = 1.0


def tools_dir() -> Path:
    return Path(os.environ.get(TOOLS_DIR_ENV) or _REPO / ".tools")


class ToolNotInstalled(ToolError):
    pass


def tool_path(name: str) -> str:
    """A tool from $BENCHTRAIL_TOOLS_DIR/bin (what install.sh writes), else from PATH."""
    candidate = tools_dir() / "bin" / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise ToolNotInstalled(f"{name} is not installed ({tools_dir() / 'bin'} nor PATH): {INSTALL_HINT}",
                           tool=name)


@dataclass(frozen=True)
class Progress:
    step: int
    step_name: str
    percent: float | None        # None when the tool gives no way to know (hey -n)
    achieved_rate: float | None  # req/s so far
    errors: int
    requests: int


@dataclass
class StepOutput:
    variant: str
    scenario: str | None          # None: the file holds every scenario (JMeter, k6 labels them)
    format: str                   # jmeter-csv, hey-csv, k6-json
    path: Path
    log_path: Path
    summary: OutputSummary
    extra_files: list[Path] = field(default_factory=list)   # e.g. k6 summary export, JMX used


@dataclass
class StepRun:
    step: Step
    outputs: list[StepOutput]
    started_ms: int
    ended_ms: int
    loadgen_cpu_s: float          # CPU seconds of all load-generator processes of the step
    loadgen_max_cpu_pct: float    # peak 1 s CPU of the busiest load generator, % of one core
    loadgen_pids: list[int]

    @property
    def wall_s(self) -> float:
        return (self.ended_ms - self.started_ms) / 1000.0


@dataclass
class _Planned:
    launch: Launch
    variant: str
    scenario: str | None
    format: str
    output: Path
    extra: list[Path]
    expected: int | None = None   # requests the tool must attempt (hey -n), for its error count


ProgressFn = Callable[[Progress], None]


class _Counter:
    """Requests/errors so far, fed by output parsing, turned into throttled Progress callbacks."""

    def __init__(self, step: Step, expected_s: float | None, expected_n: int | None,
                 callback: ProgressFn | None, parts: int) -> None:
        self.step = step
        self.expected_s = expected_s
        self.expected_n = expected_n
        self.callback = callback
        self.requests = [0] * parts
        self.errors = [0] * parts
        self.last = -math.inf
        self.first_seen: list[float | None] = [None] * parts

    def tick(self, elapsed: float) -> None:
        if self.callback is None or elapsed - self.last < _PROGRESS_EVERY_S:
            return
        self.last = elapsed
        n = sum(self.requests)
        rate = 0.0
        for i, count in enumerate(self.requests):
            # Per process, from its first request on: JMeter spends seconds starting its JVM.
            if count and self.first_seen[i] is None:
                self.first_seen[i] = elapsed
            first = self.first_seen[i]
            if count and first is not None and elapsed - first > 0.5:
                rate += count / (elapsed - first)
        pct: float | None
        if self.expected_n:
            pct = min(99.0, 100.0 * n / self.expected_n)
        elif self.expected_s:
            pct = min(99.0, 100.0 * elapsed / self.expected_s)
        else:
            pct = None
        self.callback(Progress(self.step.index, self.step.name, pct, rate or None, sum(self.errors), n))


# ---------------------------------------------------------------------------------------- JMeter

_SUMMARY_TOTAL = re.compile(r"^summary =\s+(\d+)\s+in\s+[\d:.]+\s+=\s+[\d.]+/s.*?Err:\s+(\d+)")


def _jmeter(plan: Plan, step: Step, workdir: Path, plan_dir: Path) -> list[_Planned]:
    exe = tool_path("jmeter")
    load = step.load
    scenarios = step_scenarios(plan, step)
    generated = [s for s in scenarios if s.jmx is None]
    users = [s for s in scenarios if s.jmx is not None]
    planned = []
    props = [f"-J{k}={v}" for k, v in JTL_PROPERTIES.items()]
    for vname in step.variants:
        variant = plan.variant(vname)
        runs: list[tuple[str | None, Path, list[str]]] = []
        if generated:
            jmx = workdir / f"step{step.index:03d}-{vname}.jmx"
            jmx.write_text(build_jmx(variant, generated, [load]))
            runs.append((None, jmx, []))
        for s in users:
            jmx = Path(s.jmx or "")
            jmx = jmx if jmx.is_absolute() else plan_dir / jmx
            if not jmx.is_file():
                raise ToolError(f"scenario '{s.name}': JMX file {jmx} not found", tool="jmeter")
            runs.append((s.name, jmx, _user_jmx_props(variant, load)))
        for scenario, jmx, extra_props in runs:
            stem = f"step{step.index:03d}-{vname}-{scenario or 'plan'}"
            jtl, log, out = workdir / f"{stem}.jtl", workdir / f"{stem}.jmeter.log", workdir / f"{stem}.out"
            jtl.unlink(missing_ok=True)   # JMeter appends to an existing JTL
            argv = [exe, "-n", "-t", str(jmx), "-l", str(jtl), "-j", str(log), *props, *extra_props]
            planned.append(_Planned(Launch(argv, out), vname, scenario, "jmeter-csv", jtl, [jmx, log]))
    return planned


def _user_jmx_props(variant: Variant, load: Load) -> list[str]:
    # A user's JMX reads these with ${__P(name,default)}.
    props = {"host": variant.host, "port": variant.port, "protocol": variant.scheme,
             "threads": load.threads, "duration": None if load.duration_s is None else round(load.duration_s),
             "loops": load.loops if load.loops is not None else -1,
             "rate_per_min": None if load.rate is None else load.rate * 60.0}
    return [f"-J{k}={v}" for k, v in props.items() if v is not None]


def _jmeter_check(p: _Planned, fin: Finished) -> OutputSummary:
    tail = f"{_tail(fin.stdout_path, 4)} | jmeter.log: {_tail(p.extra[1], 4)}"
    if fin.returncode != 0:
        raise ToolError(f"jmeter exited {fin.returncode} for variant '{p.variant}': {tail}", tool="jmeter")
    if not p.output.exists() or p.output.stat().st_size == 0:
        raise ToolError(f"jmeter wrote no JTL for variant '{p.variant}': {tail}", tool="jmeter")
    summary = outputs.jmeter_jtl(p.output)
    if summary.count == 0:
        raise ToolError(f"jmeter recorded no sample for variant '{p.variant}': {tail}", tool="jmeter")
    if summary.errors == summary.count:
        raise ToolError(f"every jmeter sample failed for variant '{p.variant}': {summary.first_failure}",
                        tool="jmeter")
    return summary


# ------------------------------------------------------------------------------------------ hey

def _hey(plan: Plan, step: Step, workdir: Path) -> list[_Planned]:
    exe = tool_path("hey")
    load = step.load
    c = load.concurrency or 1
    planned = []
    for vname in step.variants:
        variant = plan.variant(vname)
        for s in step_scenarios(plan, step):
            argv = [exe, "-c", str(c)]
            if load.duration_s is not None:
                argv += ["-z", f"{load.duration_s:g}s"]
            else:
                argv += ["-n", str(load.requests)]
            if load.rate is not None:
                argv += ["-q", f"{load.rate / c:.6g}"]   # hey paces each worker: total = q x c
            argv += ["-m", s.method, "-t", "30"]
            for key, value in s.headers.items():
                argv += ["-H", f"{key}: {value}"]
            if s.body is not None:
                argv += ["-d", s.body]
            argv += ["-o", "csv", variant.url(s)]
            stem = f"step{step.index:03d}-{vname}-{s.name}".replace("/", "_")
            out, err = workdir / f"{stem}.hey.csv", workdir / f"{stem}.hey.log"
            planned.append(_Planned(Launch(argv, out, stderr_path=err), vname, s.name, "hey-csv", out, [err],
                                    expected=load.requests))
    return planned


def _hey_check(p: _Planned, fin: Finished) -> OutputSummary:
    err = _tail(p.extra[0])
    if fin.returncode != 0:
        raise ToolError(f"hey exited {fin.returncode} for '{p.variant}/{p.scenario}': {err}", tool="hey")
    try:
        summary = outputs.hey_csv(p.output, p.expected)
    except Exception as exc:  # a malformed CSV means hey printed something else (usage, panic)
        raise ToolError(f"hey output for '{p.variant}/{p.scenario}' is not its CSV ({exc}): {err}",
                        tool="hey") from None
    # hey exits 0 even when every request fails; its CSV then has a header only.
    if summary.count == summary.errors:
        raise ToolError(f"every hey request failed for '{p.variant}/{p.scenario}': {summary.first_failure}",
                        tool="hey")
    return summary


# ------------------------------------------------------------------------------- k6 (constant rate)

# Seconds of arrivals k6 starts with virtual users for, unless the plan says `preallocated_vus`. A VU
# is busy while its request is in flight, so a stall of the target longer than this makes k6 drop
# arrivals; more VUs make k6's first arrivals late instead (it catches up at once). Measured at
# 1000 req/s on 2 cores: 100 VUs dropped 118 arrivals when the target stopped for 300 ms, 500 dropped
# none; the first arrivals' delay was 1-2 ms with 100, 12 ms with 500 (30-60 ms with 4 busy loops beside).
PREALLOCATED_S = 0.1


def _k6_script(variant: Variant, scenarios: list[Scenario], load: Load) -> str:
    rate = float(load.rate or 0)
    # constant-arrival-rate takes an integer rate per timeUnit; a fractional rate is scaled.
    rate_int, unit = (int(rate), "1s") if rate.is_integer() else (round(rate * 1000), "1000s")
    pre = load.preallocated_vus or max(10, math.ceil(rate * PREALLOCATED_S))
    if load.max_vus:   # the plan's bound holds (the plan check refuses preallocated_vus above it)
        pre, max_vus = min(pre, load.max_vus), load.max_vus
    else:
        max_vus = max(pre * 4, 100)
    k6_scenarios = {}
    functions = []
    for i, s in enumerate(scenarios):
        k6_scenarios[f"s{i}"] = {
            "executor": "constant-arrival-rate", "rate": rate_int, "timeUnit": unit,
            "duration": f"{load.duration_s:g}s", "preAllocatedVUs": pre, "maxVUs": max_vus,
            "exec": f"req{i}", "gracefulStop": "10s",
        }
        params = {"headers": s.headers, "tags": {"name": s.name}}
        body = "null" if s.body is None else json.dumps(s.body)
        functions.append(f"export function req{i}() {{\n  http.request({json.dumps(s.method)}, "
                         f"{json.dumps(variant.url(s))}, {body}, {json.dumps(params)});\n}}\n")
    options = {"discardResponseBodies": True, "scenarios": k6_scenarios,
               "summaryTrendStats": ["avg", "min", "med", "max", "p(75)", "p(90)", "p(95)", "p(99)",
                                     "p(99.9)", "count"]}
    return ("import http from 'k6/http';\n\n"
            f"export const options = {json.dumps(options, indent=2)};\n\n" + "\n".join(functions))


def _k6(plan: Plan, step: Step, workdir: Path) -> list[_Planned]:
    exe = tool_path("k6")
    planned = []
    for vname in step.variants:
        variant = plan.variant(vname)
        stem = f"step{step.index:03d}-{vname}"
        script = workdir / f"{stem}.k6.js"
        script.write_text(_k6_script(variant, list(step_scenarios(plan, step)), step.load))
        out, log = workdir / f"{stem}.k6.ndjson", workdir / f"{stem}.k6.log"
        summary = workdir / f"{stem}.k6-summary.json"
        out.unlink(missing_ok=True)
        argv = [exe, "run", "--quiet", "--no-color", "--no-usage-report",
                # each k6 would otherwise bind its REST API on localhost:6565 and collide
                "--address", "127.0.0.1:0",
                "--system-tags", "status,method,name,scenario,expected_response,error_code",
                "--out", f"json={out}", "--summary-export", str(summary), str(script)]
        planned.append(_Planned(Launch(argv, log), vname, None, "k6-json", out, [summary, script, log]))
    return planned


class _NdjsonTail:
    """Counts requests and failures in a growing k6 NDJSON file, decoding nothing but substrings."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""
        self.requests = 0
        self.errors = 0

    def poll(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except FileNotFoundError:
            return
        self.offset += len(chunk)
        data = self.partial + chunk
        lines = data.split(b"\n")
        self.partial = lines.pop()
        for line in lines:
            if b'"metric":"http_reqs"' in line and b'"type":"Point"' in line:
                self.requests += 1
            elif b'"metric":"http_req_failed"' in line and b'"value":1' in line:
                self.errors += 1


def _k6_check(p: _Planned, fin: Finished) -> OutputSummary:
    tail = _tail(fin.stdout_path)
    if fin.returncode not in (0, 99):   # 99: thresholds crossed, which the runner judges itself
        raise ToolError(f"k6 exited {fin.returncode} for variant '{p.variant}': {tail}", tool="k6")
    if not p.output.exists():
        raise ToolError(f"k6 wrote no output for variant '{p.variant}': {tail}", tool="k6")
    summary = outputs.k6_ndjson(p.output)
    if summary.count == 0:
        raise ToolError(f"k6 made no request for variant '{p.variant}': {tail}", tool="k6")
    if summary.errors == summary.count:
        raise ToolError(f"every k6 request failed for variant '{p.variant}': {summary.first_failure}", tool="k6")
    return summary


# ------------------------------------------------------------------------------------------ common

def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except FileNotFoundError:
        return "(no output)"
    return " | ".join(text[-lines:]) or "(no output)"


def default_timeout_s(plan: Plan, load: Load) -> float:
    if plan.step_timeout_s is not None:
        return plan.step_timeout_s
    expected = load.expected_duration_s()
    # JMeter needs seconds to start; an open-ended hey -n or JMeter loop run gets a generous bound.
    return 2 * expected + 60 if expected is not None else 3600.0


def expected_samples(plan: Plan, step: Step) -> int | None:
    """The samples a JMeter step by loops records, for its progress percentage; None where unknown."""
    load = step.load
    if plan.tool != "jmeter" or load.loops is None or not load.threads:
        return None
    scenarios = step_scenarios(plan, step)
    # A generated scenario is one sampler per loop; a user's JMX has as many as it has, unknown here.
    if any(s.jmx is not None for s in scenarios):
        return None
    return load.threads * load.loops * len(scenarios) * len(step.variants)


def run_step(
    plan: Plan,
    step: Step,
    workdir: Path,
    *,
    plan_dir: Path | None = None,
    cancel: Callable[[], bool] | None = None,
    progress: ProgressFn | None = None,
    timeout_s: float | None = None,
    on_start: Callable[[list[int]], None] | None = None,
) -> StepRun:
    """Run one step's load-generator processes together and return their checked outputs.
    Raises ToolError (tool failed, not installed, cancelled, timed out)."""
    workdir.mkdir(parents=True, exist_ok=True)
    load = step.load
    expected_s = load.expected_duration_s()
    expected_n = expected_samples(plan, step)
    tails: list[_NdjsonTail] = []
    if plan.tool == "jmeter":
        planned = _jmeter(plan, step, workdir, plan_dir or Path.cwd())
    elif plan.tool == "hey":
        # hey prints nothing until the end: with -n there is no honest percentage (None).
        planned = _hey(plan, step, workdir)
    else:
        planned = _k6(plan, step, workdir)
    counter = _Counter(step, expected_s, expected_n, progress, len(planned))

    if plan.tool == "jmeter":
        for i, p in enumerate(planned):
            def on_line(line: str, i: int = i) -> None:
                m = _SUMMARY_TOTAL.match(line)
                if m:
                    counter.requests[i], counter.errors[i] = int(m.group(1)), int(m.group(2))
            p.launch.on_line = on_line
    elif plan.tool == "constant-rate":
        tails = [_NdjsonTail(p.output) for p in planned]

    def on_tick(elapsed: float) -> None:
        for i, t in enumerate(tails):
            t.poll()
            counter.requests[i], counter.errors[i] = t.requests, t.errors
        counter.tick(elapsed)

    started_ms = int(time.time() * 1000)
    finished = run_together([p.launch for p in planned], tool=plan.tool,
                            timeout_s=timeout_s or default_timeout_s(plan, load),
                            cancel=cancel, on_tick=on_tick, on_start=on_start)
    ended_ms = int(time.time() * 1000)
    check = {"jmeter": _jmeter_check, "hey": _hey_check, "constant-rate": _k6_check}[plan.tool]
    results = []
    for i, (p, fin) in enumerate(zip(planned, finished, strict=True)):
        summary = check(p, fin)
        counter.requests[i], counter.errors[i] = summary.count, summary.errors
        results.append(StepOutput(p.variant, p.scenario, p.format, p.output, fin.stdout_path, summary, p.extra))
    if progress is not None:
        rate = sum(o.summary.achieved_rate for o in results)
        progress(Progress(step.index, step.name, 100.0, rate, sum(counter.errors), sum(counter.requests)))
    return StepRun(step=step, outputs=results, started_ms=started_ms, ended_ms=ended_ms,
                   loadgen_cpu_s=sum(f.cpu_s for f in finished),
                   loadgen_max_cpu_pct=max((f.max_cpu_pct for f in finished), default=0.0),
                   loadgen_pids=sorted({pid for f in finished for pid in f.pids}))

"""CPU profiles through a real runner: plans that profile the Java demo service without and with the
OpenTelemetry agent (async-profiler loaded with jcmd) and the Go demo's consumer with and without its tracer
(net/http/pprof) run on the test stack; the API's profiles are checked against their raw files (downloaded and
read here) and the step's requests, and the differential profile names the agent's code among the frames that
add CPU. The JDK Flight Recorder path (jcmd JFR.start/JFR.stop) is exercised against the demo JVM directly."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest
import yaml
import zstandard

from infra.localstack import REPO, Process, answers, free_port, wait_until

pytestmark = pytest.mark.slow
TOOLS = Path(os.environ.get("BENCHTRAIL_TOOLS_DIR", REPO / ".tools"))


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _run_plan(client, slug: str, token: str, plan: dict, timeout: float) -> dict:
    r = client.post(f"/api/v1/projects/{slug}/plans", content=json.dumps(plan),
                    headers={**_auth(token), "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    r = client.post(f"/api/v1/projects/{slug}/plans/{plan['name']}/runs", json={}, headers=_auth(token))
    assert r.status_code == 202, r.text
    run_slug = r.json()["slug"]
    run = wait_until(lambda: (x := client.get(f"/api/v1/runs/{run_slug}").json())["status"] in (
        "completed", "failed", "cancelled") and x, timeout, f"run {run_slug} to finish", interval=0.5)
    assert run["status"] == "completed", run["status_detail"]
    return run


def _raw(client, url: str) -> bytes:
    r = client.get("/" + url.split("/", 3)[3])
    assert r.status_code == 200, r.text
    data = r.content
    if data.startswith(b"\x28\xb5\x2f\xfd"):   # the runner sends its outputs zstd-compressed
        data = zstandard.ZstdDecompressor().stream_reader(data).read()
    return data


def _check_profiles(client, run: dict, variants: tuple[str, str]) -> list[dict]:
    """Every repetition of both variants is profiled; each profile's requests are its step's, which add up to
    the variant's cells; the flame graph's root is the mean of cpu_ms x 1000 / requests (exact fractions)."""
    slug = run["slug"]
    profiles = client.get(f"/api/v1/runs/{slug}/profiles").json()["items"]
    reps = max(p["repetition"] for p in profiles)
    assert sorted((p["variant"], p["repetition"]) for p in profiles) == sorted(
        (v, r) for v in variants for r in range(1, reps + 1))
    names = {v["id"]: v["name"] for v in run["variants"]}
    for variant in variants:
        mine = [p for p in profiles if p["variant"] == variant]
        counted = sum(c["count"] for c in run["cells"] if names[c["variant_id"]] == variant and c["count"]
                      and c["scenario_id"] in {s["id"] for s in run["scenarios"] if s["name"] != "*"})
        assert sum(p["requests"] for p in mine) == counted
        flame = client.get(f"/api/v1/runs/{slug}/profiles/flame", params={"variant": variant}).json()
        expected = sum(Fraction(p["cpu_ms"]) * 1000 / p["requests"] for p in mine) / len(mine)
        assert flame["total"] == pytest.approx(float(expected), rel=1e-9)
        assert flame["repetitions"] == len(mine) and len(flame["nodes"]) > 10
        for p in mine:
            assert p["samples"] > 0 and p["raw_files"], p
    return profiles


def _top_agent_rows(diff: dict, n: int) -> list[dict]:
    return [r for r in diff["packages"][:n] if r["agent"]] + [r for r in diff["frames"][:n] if r["agent"]]


@pytest.mark.timeout(600)
def test_java_demo_profiles_show_the_agents_code(client, make_project, start_runner, worker, java_demo):
    slug, token = make_project(role="admin")
    start_runner("profiles", "runner-profiles")
    baseline, agent = java_demo
    plan = yaml.safe_load((REPO / "examples/plans/demo-otel-profile.yaml").read_text())
    plan.update(pool="profiles", repetitions=3, warmup_s=2, loads=[{"concurrency": 2, "duration_s": 3}])
    for v in plan["variants"]:
        url = baseline if v["name"] == "baseline" else agent
        v["target"], v["resources"]["url"] = url, f"{url}/metrics"
    run = _run_plan(client, slug, token, plan, 420)
    profiles = _check_profiles(client, run, ("baseline", "agent"))
    # The stored weights are the raw collapsed stacks' counts x 10 ms, read here from the downloaded file.
    for p in profiles:
        [raw] = p["raw_files"]
        assert raw["format"] == "collapsed"
        text = _raw(client, raw["download_url"]).decode()
        counts = [int(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.strip()]
        assert p["samples"] == sum(counts) and p["cpu_ms"] == pytest.approx(10.0 * sum(counts))
    diff = client.get(f"/api/v1/runs/{run['slug']}/profiles/diff").json()
    assert (diff["variant"], diff["reference"]) == ("agent", "baseline")
    table = [(r["name"], round(r["self"]["abs_diff"], 1), round(r["total"]["abs_diff"], 1)) for r in diff["packages"]]
    print("RESULT java packages (self, total added CPU-ms/1k):", table[:10])
    assert any(r["name"].startswith("io.opentelemetry") for r in _top_agent_rows(diff, 5)), table[:10]
    assert diff["whole"]["abs_diff"] > 0
    c = diff["consistency"]
    assert c is not None and c["sampled"] is not None
    print(f"RESULT java profile added {c['profile']['abs_diff']:.1f} CPU-ms/1k vs sampled "
          f"{c['sampled']['abs_diff']:.1f} (gap {c['gap_pct']:+.0f}%, coverage {c['coverage_pct']:.0f}%, "
          f"agree {c['agree']})")
    by_name = {n["name"]: n for n in diff["flame"]["nodes"]}
    assert by_name["all"]["delta_total"] == pytest.approx(diff["whole"]["abs_diff"], rel=1e-9)


def test_jfr_profiles_the_demo_jvm_in_a_step(java_demo, tmp_path):
    """The runner's JDK Flight Recorder path on the demo JVM: JFR.start before the load, JFR.stop into a
    recording after it, read with `jfr print --json` into stacks whose sample count is jfr summary's."""
    import re
    import shutil
    import subprocess

    from benchtrail.ingest.parsers.profiles import read_document
    from benchtrail_runner.plan import Profile, Variant
    from benchtrail_runner.profiling import StepProfiles, finish

    _, agent = java_demo
    variant = Variant(name="agent", target=agent, profile=Profile(runtime="jvm"))
    running = StepProfiles([variant], 1, tmp_path, 0, 2.0)
    subprocess.run([str(TOOLS / "bin" / "hey"), "-z", "2s", "-c", "2", f"{agent}/api/vet/vets"],
                   capture_output=True, check=True)
    files = finish(running.stop())
    assert [f.format for f in files] == ["jfr", "benchtrail-profile"]
    summary = subprocess.run([shutil.which("jfr") or "jfr", "summary", str(files[0].path)], capture_output=True,
                             text=True, check=True).stdout
    count = int(re.search(r"jdk\.ExecutionSample\s+(\d+)", summary).group(1))
    stacks = read_document(files[1].path)
    assert stacks.samples == count > 0 and stacks.cpu_ms == pytest.approx(10.0 * count)


@pytest.fixture(scope="module")
def go_pair(logdir: Path):
    """The Go demo target twice, serving pprof: no-agent, and agent with its tracer exporting to a sink."""
    binary = TOOLS / "bin" / "benchtrail-demo-target"
    ports = [free_port() for _ in range(3)]
    sink = f"http://127.0.0.1:{ports[2]}"
    env = {**os.environ, "GOMAXPROCS": "1"}
    procs = [Process("go-sink", [str(binary), "-addr", f"127.0.0.1:{ports[2]}"], env, logdir),
             Process("go-noagent", [str(binary), "-addr", f"127.0.0.1:{ports[0]}", "-pprof"], env, logdir),
             Process("go-agent", [str(binary), "-addr", f"127.0.0.1:{ports[1]}", "-pprof", "-trace", sink], env,
                     logdir)]
    urls = [f"http://127.0.0.1:{p}" for p in ports[:2]]
    for url in urls:
        wait_until(lambda url=url: answers(f"{url}/ok", timeout=1), 15, url)
    yield urls
    for p in procs:
        p.stop()


@pytest.mark.timeout(300)
def test_go_demo_profiles_show_the_tracer(client, make_project, start_runner, worker, go_pair):
    slug, token = make_project(role="admin")
    start_runner("profiles-go", "runner-profiles-go")
    plan = {"version": 1, "name": "go profile", "tool": "hey", "pool": "profiles-go",
            "variants": [{"name": name, "role": role, "target": url, "resources": {"source": "process"},
                          "profile": {"runtime": "go", "agent_packages": ["(*tracer)"]}}
                         for name, role, url in (("no-agent", "reference", go_pair[0]), ("agent", "variant", go_pair[1]))],
            "scenarios": [{"name": "echo", "path": "/echo?q=1"}], "loads": [{"concurrency": 4, "duration_s": 2}],
            "warmup_s": 1, "repetitions": 3, "order": "interleaved"}
    run = _run_plan(client, slug, token, plan, 240)
    profiles = _check_profiles(client, run, ("no-agent", "agent"))
    for p in profiles:   # every pprof file of the step, read here with the protobuf library's own decoding
        assert p["source"] == "pprof" and all(raw["format"] == "pprof" for raw in p["raw_files"])
    diff = client.get(f"/api/v1/runs/{run['slug']}/profiles/diff").json()
    table = [(r["name"], round(r["self"]["abs_diff"], 1), round(r["total"]["abs_diff"], 1)) for r in diff["packages"]]
    print("RESULT go packages (self, total added CPU-ms/1k):", table[:10])
    assert any(r["name"] == "(*tracer)" for r in diff["packages"][:5] if r["agent"]), table[:10]
    c = diff["consistency"]
    print(f"RESULT go profile added {c['profile']['abs_diff']:.1f} CPU-ms/1k vs sampled "
          f"{c['sampled']['abs_diff']:.1f} (gap {c['gap_pct']:+.0f}%, coverage {c['coverage_pct']:.0f}%)")


def test_py_spy_profiles_a_python_target_in_a_step(logdir: Path, tmp_path):
    """The runner's py-spy path against a real Python HTTP server under hey: collapsed stacks whose counts the
    server reads, frames named by function and file."""
    import subprocess
    import sys

    from benchtrail.ingest.parsers.profiles import read_collapsed
    from benchtrail_runner.plan import Profile, Variant
    from benchtrail_runner.profiling import StepProfiles

    port = free_port()
    server = Process("py-target", [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                   "--directory", str(tmp_path)], dict(os.environ), logdir)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: answers(f"{url}/", timeout=1), 15, "the Python server")
        variant = Variant(name="py", target=url, profile=Profile(runtime="python"))
        running = StepProfiles([variant], 1, tmp_path, 0, 2.0)
        subprocess.run([str(TOOLS / "bin" / "hey"), "-z", "2s", "-c", "2", f"{url}/"], capture_output=True, check=True)
        [f] = running.stop()
    finally:
        server.stop()
    assert f.format == "collapsed"
    lines = [line.rsplit(" ", 1) for line in f.path.read_text().splitlines() if line.strip()]
    stacks = read_collapsed(f.path, "python", 10.0)
    assert stacks.samples == sum(int(n) for _, n in lines) > 0
    assert any("server.py" in name for name in stacks.frames), stacks.frames[:20]

"""The formats Bencher and github-action-benchmark users bring, end to end through the API and a real worker:
each uploads and trends (two runs of two versions make a trail of two points, in version order, with the values
an independent reader of the raw files gives); a github-action-benchmark history imports as backdated runs in
time order that its trails show in that order; BMF goes out of a run and back in unchanged; a bad history is
refused naming file, entry and field, and leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.localstack import wait_until
from tests.support import corpus_oracle as oracle

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus"
GO = REPO / "examples" / "go-otel-bench" / "results"


def _upload(client, slug, token, path: Path, version: str, **spec):
    meta = {"files": [{"variant": "baseline", **spec}], "agent_version": version}
    r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                    data={"metadata": json.dumps(meta)}, files=[("files", (path.name, path.read_bytes()))])
    assert r.status_code == 202, r.text
    return r.json()


def _settled(client, run_slug, timeout=90):
    return wait_until(lambda: (r := client.get(f"/api/v1/runs/{run_slug}").json())["status"] in ("completed", "failed")
                      and r.get("analysis_status") in ("done", "failed") and r, timeout, f"run {run_slug} to settle")


def _trail(client, slug, scenario, mode):
    trails = client.get(f"/api/v1/projects/{slug}/trails", params={"scenario": scenario}).json()["items"]
    [t] = [t for t in trails if t["mode"] == mode and t["scenario"] == scenario]
    return client.get(f"/api/v1/trails/{t['id']}", params={"metric": "score"}).json()


# (format, two files of two versions, the upload's extra spec, a (scenario, mode) to follow, the oracle's mode)
CASES = [
    ("go-bench", [GO / "otel-sdk-v1.24.0.txt", GO / "otel-sdk-v1.36.0.txt"], {},
     ("BenchmarkSpan(exporter=recording)", "ns/op")),
    ("pytest-benchmark", sorted((CORPUS / "pytest-benchmark").glob("pytest-benchmark-*[0-9].json")), {},
     ("test_json_dumps", "mean")),
    ("google-benchmark", [CORPUS / "google-benchmark" / n for n in
                          sorted(p.name for p in (CORPUS / "google-benchmark").glob("*_repetitions5.json"))] * 2, {},
     ("BM_Sum/512", "real_time")),
    ("criterion-estimates", sorted((CORPUS / "criterion").glob("*/fib_15_estimates.json")), {"scenario": "fib 15"},
     ("fib 15", "time")),
    ("hyperfine", sorted((CORPUS / "hyperfine").glob("*_two-commands.json")) * 2, {}, ("ls /", "mean")),
]


@pytest.mark.parametrize("fmt,files,spec,follow", CASES, ids=[c[0] for c in CASES])
def test_uploads_and_trends(client, worker, make_project, fmt, files, spec, follow) -> None:
    assert len(files) == 2, files
    slug, token = make_project()
    runs = []
    for version, path in zip(("1.0.0", "1.1.0"), files):
        accepted = _upload(client, slug, token, path, version, **spec)
        assert [(f["format"], f["detected"]) for f in accepted["files"]] == [(fmt, True)]
        run = _settled(client, accepted["run"])
        assert run["status"] == "completed", run["status_detail"]
        runs.append(run)
    scenario, mode = follow
    detail = _trail(client, slug, scenario, mode)
    assert [p["run"] for p in detail["points"]] == [r["slug"] for r in runs]          # version order
    for point, path in zip(detail["points"], files):
        exp = oracle.expected(path.parent.name if path.parent.parent.name == "corpus" else
                              ("criterion" if fmt.startswith("criterion") else "go-bench"), path)
        assert point["value"] in [pytest.approx(v, rel=1e-9) for v in exp.scores[mode if mode in exp.scores else "*"]]
    assert detail["unit"]


def test_go_values_are_the_repetitions_mean(client, worker, make_project) -> None:
    slug, token = make_project()
    path = GO / "otel-sdk-v1.28.0.txt"
    run = _settled(client, _upload(client, slug, token, path, "1.28.0")["run"])
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    cells = {(scenarios[c["scenario_id"]], c["mode"]): c for c in run["cells"]}
    # independently: the -count 5 lines of that benchmark, averaged
    lines = [line.split() for line in path.read_text().splitlines()
             if line.startswith("BenchmarkSpan/exporter=none-")]
    ns = [float(f[2]) for f in lines]
    cell = cells[("BenchmarkSpan(exporter=none)", "ns/op")]
    assert len(ns) == 5 and cell["replicates"] == ns
    assert cell["score"] == pytest.approx(sum(ns) / 5, rel=1e-12)
    spans = cells[("BenchmarkSpan(exporter=none)", "spans/s")]
    assert spans["score_unit"] == "spans/s ↑"          # a rate: better higher
    assert cells[("BenchmarkSpan(exporter=none)", "allocs/op")]["score"] == float(lines[0][8])
    loads = {lv["id"]: lv for lv in run["loads"]}
    assert {(loads[c["load_id"]]["kind"], loads[c["load_id"]]["value"]) for c in run["cells"]} == {("threads", 2.0)}


def _data_js(tmp: Path) -> Path:
    """A github-action-benchmark data.js as the action writes it, of three CI runs (commits out of file order)."""
    def entry(commit: str, ts: str, date: int, value: float) -> dict:
        return {"commit": {"author": {"name": "dev"}, "id": commit, "message": f"change {commit[:4]}",
                           "timestamp": ts, "url": f"https://example.invalid/{commit}"},
                "date": date, "tool": "go",
                "benches": [{"name": "BenchmarkSpan/exporter=none - ns/op", "value": value, "unit": "ns/op",
                             "extra": "200000 times\n2 procs"},
                            {"name": "BenchmarkSpan/exporter=none - allocs/op", "value": 4, "unit": "allocs/op",
                             "extra": "200000 times\n2 procs"}]}
    data = {"lastUpdate": 1700000300000, "repoUrl": "https://example.invalid/repo",
            "entries": {"Go Benchmark": [entry("b" * 40, "2023-11-14T22:15:00Z", 1700000200000, 1200.0),
                                         entry("a" * 40, "2023-11-14T22:13:00Z", 1700000000000, 1000.0),
                                         entry("c" * 40, "2023-11-14T22:16:40Z", 1700000300000, 1500.0)]}}
    path = tmp / "data.js"
    path.write_text("window.BENCHMARK_DATA = " + json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def test_github_action_benchmark_history_imports_in_time_order(client, worker, make_project, scratch) -> None:
    slug, token = make_project()
    path = _data_js(scratch)
    auth = {"Authorization": f"Bearer {token}"}
    r = client.post(f"/api/v1/projects/{slug}/imports", headers=auth, data={"metadata": "{}"},
                    files=[("files", (path.name, path.read_bytes()))])
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["format"] == "gab-history" and body["imported"] == 3
    assert [x["commit"][0] for x in body["runs"]] == ["a", "b", "c"]              # time order, not file order
    for x in body["runs"]:
        assert _settled(client, x["run"])["status"] == "completed"
    # The trail a Go upload of the same benchmark (2 procs) goes on: scenario, measure and load as go-bench reads them.
    detail = _trail(client, slug, "BenchmarkSpan(exporter=none)", "ns/op")
    assert detail["trail"]["load_key"] == "threads:2"
    assert [p["commit"][0] for p in detail["points"]] == ["a", "b", "c"]
    assert [p["value"] for p in detail["points"]] == [1000.0, 1200.0, 1500.0]
    assert detail["direction"] == "lower"
    run = client.get(f"/api/v1/runs/{body['runs'][0]['run']}").json()
    assert run["source"] == "import" and run["started_at"].startswith("2023-11-14T22:13:20")
    # Importing the same history again makes nothing new.
    again = client.post(f"/api/v1/projects/{slug}/imports", headers=auth, data={"metadata": "{}"},
                        files=[("files", (path.name, path.read_bytes()))]).json()
    assert again["imported"] == 0 and again["already"] == 3
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["total"] == 3


def test_a_bad_history_is_refused_and_leaves_nothing(client, worker, make_project, scratch) -> None:
    slug, token = make_project()
    path = _data_js(scratch)
    text = path.read_text().replace('"value": 1200.0', '"value": "fast"', 1)
    assert text != path.read_text()
    path.write_text(text)
    r = client.post(f"/api/v1/projects/{slug}/imports", headers={"Authorization": f"Bearer {token}"},
                    data={"metadata": "{}"}, files=[("files", (path.name, path.read_bytes()))])
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert "data.js" in detail and "entries.Go Benchmark[0].benches[0].value" in detail and "'fast'" in detail
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["total"] == 0
    # A history uploaded as a run is refused with the way to import it.
    r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                    data={"metadata": json.dumps({"files": [{"variant": "v"}]})},
                    files=[("files", ("data.js", _data_js(scratch).read_bytes()))])
    assert r.status_code == 400 and "import it" in r.json()["detail"]


def test_bmf_goes_out_and_back_in(client, worker, make_project, scratch) -> None:
    slug, token = make_project()
    run = _settled(client, _upload(client, slug, token, GO / "otel-sdk-v1.31.0.txt", "1.31.0")["run"])
    bmf = client.get(f"/api/v1/runs/{run['slug']}/bmf").json()
    name = "BenchmarkSpan(exporter=none) @ 2 threads"
    cells = {(s["name"], c["mode"]): c for c in run["cells"] for s in run["scenarios"] if s["id"] == c["scenario_id"]}
    assert bmf[name]["latency"]["value"] == pytest.approx(cells[("BenchmarkSpan(exporter=none)", "ns/op")]["score"])
    assert bmf[name]["b-op"]["value"] == cells[("BenchmarkSpan(exporter=none)", "B/op")]["score"]
    path = scratch / "export.json"
    path.write_text(json.dumps(bmf))
    again = _upload(client, slug, token, path, "1.31.0-bmf")
    assert again["files"][0]["format"] == "bmf"
    back = _settled(client, again["run"])
    assert client.get(f"/api/v1/runs/{back['slug']}/bmf").json() == bmf


def test_demo_go_bench_history_loads_in_version_order(live_api, admin_token, worker, client) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("demo_go_bench", REPO / "infra" / "scripts" / "demo_go_bench.py")
    demo = importlib.util.module_from_spec(spec)   # type: ignore[arg-type]
    spec.loader.exec_module(demo)                  # type: ignore[union-attr]
    from benchtrail_runner.client import Client

    runs = demo.load_go_bench(Client(live_api, admin_token))
    assert runs == demo.load_go_bench(Client(live_api, admin_token))     # idempotent
    versions = [v for v, _ in demo.versions()]
    assert len(runs) == len(versions) >= 3
    for slug in runs:
        assert _settled(client, slug)["status"] == "completed"
    detail = _trail(client, demo.PROJECT, "BenchmarkSpan(exporter=recording)", "allocs/op")
    assert [p["agent_version"] for p in detail["points"]] == versions


def test_the_cli_says_the_format_imports_a_history_and_exports_bmf(client, live_api, worker, make_project,
                                                                  scratch) -> None:
    """`benchtrail upload` names each file's format, `benchtrail import` makes the history's runs and waits for them,
    `benchtrail export` writes the run's BMF as the API answers it."""
    import os
    import subprocess

    from infra.localstack import VENV_BIN

    slug, token = make_project()
    env = {**os.environ, "BENCHTRAIL_URL": live_api, "BENCHTRAIL_TOKEN": token}
    cli = str(VENV_BIN / "benchtrail")
    go = GO / "otel-sdk-v1.34.0.txt"
    up = subprocess.run([cli, "upload", "--project", slug, "--variant", f"sdk={go}", "--agent-version", "1.34.0",
                         "--wait"], env=env, capture_output=True, text=True, timeout=180)
    assert up.returncode == 0, up.stderr
    assert f"{go.name} (sdk): read as go-bench (detected)" in up.stderr
    forced = subprocess.run([cli, "upload", "--project", slug, "--variant", f"sdk={go}", "--format", "hyperfine"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert forced.returncode == 3 and go.name in forced.stderr and "invalid JSON" in forced.stderr   # --format wins
    history = _data_js(scratch)
    imp = subprocess.run([cli, "import", str(history), "--project", slug, "--wait", "--json"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert imp.returncode == 0, imp.stderr
    body = json.loads(imp.stdout)
    assert body["imported"] == 3 and [r["status"] for r in body["runs"]] == ["completed"] * 3
    run = body["runs"][0]["run"]
    out = scratch / "run.bmf.json"
    exp = subprocess.run([cli, "export", run, "-o", str(out)], env=env, capture_output=True, text=True, timeout=60)
    assert exp.returncode == 0, exp.stderr
    assert json.loads(out.read_text()) == client.get(f"/api/v1/runs/{run}/bmf").json()
    assert json.loads(out.read_text())["BenchmarkSpan(exporter=none) @ 2 threads"]["latency"]["value"] == 1000.0


def test_the_four_faults_end_to_end(client, worker, make_project) -> None:
    """Issue 37's four files, genuine (tests/corpus), through the API and a worker: each read, with the numbers an
    independent reader of the raw file gives."""
    slug, token = make_project()
    files = [
        ({"variant": "jmeter", "timestamp_zone": "Europe/Berlin"},
         CORPUS / "jmeter-csv" / "jmeter-5.6.3_ts-berlin-comma-millis.jtl", "jmeter-csv"),
        ({"variant": "gatling"}, CORPUS / "gatling-simulation-log" / "gatling-3.9.5_assertsim_port18491.simulation.log",
         "gatling-log"),
        ({"variant": "wrk"}, CORPUS / "wrk-text" / "wrk-4.1.0_timeouts_alternate.txt", "wrk-text"),
        ({"variant": "jmh"}, CORPUS / "jmh-text" / "tinybench_jmh-1.37_avgt-sample_us_gcprof.console.txt", "jmh-text"),
    ]
    meta = {"files": [spec for spec, _, _ in files]}
    r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                    data={"metadata": json.dumps(meta)}, files=[("files", (p.name, p.read_bytes())) for _, p, _ in files])
    assert r.status_code == 202, r.text
    assert [f["format"] for f in r.json()["files"]] == [fmt for _, _, fmt in files]
    run = _settled(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    whole = {}
    for c in run["cells"]:
        if scenarios[c["scenario_id"]] in ("*", "http://127.0.0.1:18493/"):
            whole.setdefault(variants[c["variant_id"]], []).append(c)
    for name, folder, path in (("jmeter", "jmeter-csv", files[0][1]), ("gatling", "gatling-simulation-log", files[1][1])):
        exp = oracle.expected(folder, path)
        assert sum(c["count"] for c in whole[name]) == exp.total
        assert sum(c["errors"] for c in whole[name]) == exp.whole["errors"]
    wrk = oracle.expected("wrk-text", files[2][1])
    [cell] = whole["wrk"]
    assert cell["count"] == wrk.scores["count"][0] and cell["throughput"] == wrk.scores["throughput"][0]
    assert cell["errors"] == wrk.scores["errors"][0]
    jmh = [c for c in run["cells"] if variants[c["variant_id"]] == "jmh"]
    assert sorted(c["score"] for c in jmh) == pytest.approx(oracle.expected("jmh-text", files[3][1]).scores["*"])

"""The recorded demo `make up` loads (examples/data/, recorded by infra/demo/record.py), through the same command
`make up` runs (`infra/scripts/demo.py recorded`) into the test stack, and its cells against the raw files read
here independently: the CSV and NDJSON outputs parsed with the standard library, percentiles with numpy's
nearest rank (`inverted_cdf`), the runner's resource file averaged by hand. Each seed's shape is asserted from
the API: thread groups 10/20/50 × two URIs × baseline/agent with CPU, heap, P75 and throughput (EaseAgent);
three router variants × static/prefix/regexp × concurrency 50/100/120 with throughput ratios (Easegress); the
consumer and provider's CPU and memory per variant at 1,000 requests per second (PTS)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import httpx
import numpy as np
import pytest
import zstandard

from infra.localstack import REPO

DATA = REPO / "examples" / "data"
PERCENTILE_REL = 1e-3       # HDR histograms: 3 significant digits
THREADS = (10, 20, 50)
URIS = ("API-URI-owner-3spans", "API-URI-vets-10spans")


def _read(path: Path) -> str:
    return zstandard.ZstdDecompressor().stream_reader(path.open("rb")).read().decode()


def _nearest_rank(values_ms: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values_ms), p, method="inverted_cdf"))


def _upload(project: str, run: str) -> tuple[dict, list[Path]]:
    doc = json.loads((DATA / project / run / "upload.json").read_text())
    return doc["metadata"], [DATA / project / run / f for f in doc["files"]]


def _load_key(load: dict) -> str:
    """As the API keys a load level (benchtrail_runner.plan.LoadSpec.key)."""
    num = lambda v: str(int(v)) if float(v).is_integer() else repr(float(v))  # noqa: E731
    parts = [load["kind"], num(load["value"])]
    if load.get("requests") is not None:
        parts.append(f"n{load['requests']}")
    if load.get("duration_s") is not None:
        parts.append(f"d{num(load['duration_s'])}s")
    return ":".join(parts)


class Expected:
    """Per (variant, scenario, load key): every measured file's samples (start ms, latency ms, success), so a
    cell is computed as the API defines it: counts add up, throughput is the total count over the sum of each
    file's span (first start to last end of that scenario in the file), percentiles over every sample."""

    def __init__(self) -> None:
        self.parts: dict[tuple[str, str, str], list[tuple[list[float], list[float], list[bool]]]] = defaultdict(list)

    def add(self, variant: str, load_key: str, rows: list[tuple[str, float, float, bool]]) -> None:
        by_scenario: dict[str, tuple[list[float], list[float], list[bool]]] = defaultdict(lambda: ([], [], []))
        for scenario, start_ms, latency_ms, ok in rows:
            part = by_scenario[scenario]
            part[0].append(start_ms)
            part[1].append(latency_ms)
            part[2].append(ok)
        for scenario, part in by_scenario.items():
            self.parts[(variant, scenario, load_key)].append(part)

    def cell(self, key: tuple[str, str, str]) -> dict[str, float]:
        parts = self.parts[key]
        latencies = [x for _, lat, _ in parts for x in lat]
        spans = [(max(s + x for s, x in zip(st, lat)) - min(st)) / 1000.0 for st, lat, _ in parts]
        count = len(latencies)
        return {"count": count, "errors": sum(not ok for _, _, oks in parts for ok in oks),
                "throughput": count / sum(spans), "span_s": sum(spans), "files": len(parts),
                "latency_mean": float(np.mean(latencies)),
                "latency_p50": _nearest_rank(latencies, 50), "latency_p75": _nearest_rank(latencies, 75),
                "latency_p99": _nearest_rank(latencies, 99)}


def _jtl_rows(text: str) -> list[tuple[str, float, float, bool]]:
    # The runner's JMeter writes sample start times (sampleresult.timestamp.start=true), elapsed in ms.
    return [(r["label"], float(r["timeStamp"]), float(r["elapsed"]), r["success"] == "true")
            for r in csv.DictReader(io.StringIO(text))]


def _hey_rows(text: str, scenario: str, started_ms: int) -> list[tuple[str, float, float, bool]]:
    # hey -o csv: seconds, 0.1 ms resolution, offset counted from hey's own start.
    return [(scenario, started_ms + float(r["offset"]) * 1000.0, float(r["response-time"]) * 1000.0,
             int(r["status-code"]) < 400) for r in csv.DictReader(io.StringIO(text))]


def _k6_rows(text: str) -> list[tuple[str, float, float, bool]]:
    # k6 --out json: an http_req_duration point is stamped with the request's end; start = end - duration.
    rows = []
    for line in text.splitlines():
        if '"http_req_duration"' not in line or '"Point"' not in line:
            continue
        data = json.loads(line)["data"]
        whole, fraction, zone = re.fullmatch(r"(.+T[\d:]+)(?:\.(\d+))?(Z|[+-][\d:]+)", data["time"]).groups()
        seconds = datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone)).timestamp()
        end_ms = (seconds + float(f"0.{fraction or 0}")) * 1000.0
        rows.append((data["tags"]["name"], end_ms - data["value"], data["value"],
                     data["tags"]["expected_response"] == "true"))
    return rows


def _resources(meta: dict, files: list[Path]) -> dict[tuple[str, str, str], list[dict]]:
    """The runner's resource file: (variant, process or '', load key) -> each measured step's stats."""
    out: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for spec, path in zip(meta["files"], files, strict=True):
        if spec["format"] != "benchtrail-json":
            continue
        for variant in json.loads(_read(path))["variants"]:
            for scenario in variant["scenarios"]:
                for entry in scenario["loads"]:
                    out[(variant["name"], entry.get("process", ""), _load_key(entry["load"]))].append(entry["stats"])
    return out


@pytest.fixture(scope="module")
def demo(live_api: str, worker, admin_token: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The recorded demo loaded by `infra/scripts/demo.py recorded` (what `make up` runs), under a slug prefix of
    its own; the slug of each project's runs by folder name."""
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    # Twice, as two `make up`s do: the second must make no new run (each `api.runs` checks the count).
    for attempt in ("first", "again"):
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(REPO / "infra/scripts/demo.py"), "recorded", "--url", live_api,
                               "--prefix", prefix], env={**os.environ, "BENCHTRAIL_TOKEN": admin_token},
                              capture_output=True, text=True, timeout=280)
        assert done.returncode == 0, done.stdout + done.stderr
        print(f"RESULT demo_recorded_load {attempt} seconds={time.monotonic() - started:.1f} "
              f"({done.stdout.strip().splitlines()[-1]})")
    with httpx.Client(base_url=live_api, timeout=60) as http:
        xray = http.get(f"/api/v1/projects/{prefix}aws-xray-java-agent/runs").json()
        assert xray["total"] == 6, xray
        go = http.get(f"/api/v1/projects/{prefix}otel-go-sdk-bench/runs").json()
        assert go["total"] == len(list((REPO / "examples/go-otel-bench/results").glob("otel-sdk-v*.txt"))), go
    return {"prefix": prefix, "url": live_api}


@pytest.fixture(scope="module")
def api(demo: dict[str, str]):  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=demo["url"], timeout=60) as http:
        def runs(project: str) -> dict[str, dict]:
            """The project's runs (detail) by the recorded folder they came from."""
            folders = json.loads((DATA / project / "project.json").read_text())["runs"]
            r = http.get(f"/api/v1/projects/{demo['prefix']}{project}/runs", params={"per_page": 50})
            assert r.status_code == 200, r.text
            items = r.json()["items"]
            assert len(items) == len(folders), (project, [i["slug"] for i in items])
            out = {}
            for folder in folders:
                meta, _ = _upload(project, folder)
                [item] = [i for i in items if i["started_at"] and
                          datetime.fromisoformat(i["started_at"]) == datetime.fromisoformat(meta["started_at"])]
                detail = http.get(f"/api/v1/runs/{item['slug']}").json()
                assert detail["status"] == "completed", detail["status_detail"]
                out[folder] = detail
            return out
        yield http, runs


def _index(run: dict) -> dict[tuple[str, str, str], dict]:
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {ld["id"]: ld["key"] for ld in run["loads"]}
    return {(variants[c["variant_id"]], scenarios[c["scenario_id"]], loads[c["load_id"]]): c for c in run["cells"]}


def _check_cell(got: dict, want: dict[str, float], what: object, start_ms_rounded: bool = False) -> None:
    """`start_ms_rounded`: ingest keeps a sample's start in whole ms (exact for JMeter's integer times), so
    for hey's and k6's sub-millisecond times each file's span may differ by up to 1 ms at either end."""
    assert got["count"] == want["count"], what
    assert got["errors"] == want["errors"], what
    slack = 2 * want["files"] / 1000.0 / want["span_s"] if start_ms_rounded else 1e-9
    assert got["throughput"] == pytest.approx(want["throughput"], rel=slack + 1e-9), what
    # Latencies are kept in whole µs (k6 writes fractions of them): the mean to within 0.5 µs, and each
    # percentile within the histogram's 0.1% of a value that may be 0.5 µs off.
    assert got["latency_mean"] == pytest.approx(want["latency_mean"], rel=1e-9, abs=0.0005), what
    for p in ("latency_p50", "latency_p75", "latency_p99"):
        assert got[p] == pytest.approx(want[p], rel=PERCENTILE_REL, abs=0.0005), (what, p)


def test_easeagent_shape(api) -> None:  # type: ignore[no-untyped-def]
    http, runs = api
    recorded = runs("easeagent")
    assert len(recorded) >= 2, "History needs a trail: several agent versions"
    for folder, run in recorded.items():
        meta, files = _upload("easeagent", folder)
        assert run["agent_version"] == meta["agent_version"]
        assert {v["name"]: v["is_reference"] for v in run["variants"]} == {"baseline": True, "agent": False}
        assert sorted(ld["value"] for ld in run["loads"]) == list(THREADS)
        assert {ld["kind"] for ld in run["loads"]} == {"threads"}
        expected = Expected()
        for spec, path in zip(meta["files"], files, strict=True):
            if spec["format"] == "jmeter-csv" and not spec.get("series_only"):
                expected.add(spec["variant"], _load_key(spec["load"]), _jtl_rows(_read(path)))
        cells = _index(run)
        assert {k[1] for k in expected.parts} == set(URIS)
        assert len(expected.parts) == 2 * len(URIS) * len(THREADS)
        for key in expected.parts:
            _check_cell(cells[key], expected.cell(key), (folder, key))
        # JMeter's 1 ms resolution sees the latencies: the vets URI (5 database calls) is several ms slower.
        for variant in ("baseline", "agent"):
            for load in run["loads"]:
                owner, vets = (cells[(variant, u, load["key"])]["latency_p75"] for u in URIS)
                assert 2 <= owner < vets, (folder, variant, load["key"], owner, vets)
        # CPU, heap and RSS of both JVMs per thread group: the mean of each measured step's values in the runner's file.
        for (variant, _, load_key), steps in _resources(meta, files).items():
            cell = cells[(variant, "*", load_key)]
            assert len(steps) >= 2, (variant, load_key)   # one per repetition
            for metric in ("cpu_pct", "heap_mb", "rss_mb"):
                assert cell[metric] == pytest.approx(np.mean([s[metric] for s in steps]), rel=1e-9), (variant, metric)
        # The lead table's diff: agent minus baseline per URI and thread group, with an interval.
        r = http.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": "latency_p75"})
        assert r.status_code == 200, r.text
        rows = {(o["cell"]["scenario"], o["cell"]["load_key"]): o["result"] for o in r.json()["items"]
                if o["variant"] == "agent" and not o["cell"]["process"]}
        for uri in URIS:
            for load in run["loads"]:
                row = rows[(uri, load["key"])]
                # Over repetitions: each repetition's own P75 (one JTL per variant and repetition), the diff of
                # their means, and an interval around it.
                reps = {v: sorted(_nearest_rank(lat, 75) for _, lat, _ in expected.parts[(v, uri, load["key"])])
                        for v in ("baseline", "agent")}
                assert sorted(row["repetitions"]["reference"]) == pytest.approx(reps["baseline"], rel=PERCENTILE_REL)
                assert sorted(row["repetitions"]["variant"]) == pytest.approx(reps["agent"], rel=PERCENTILE_REL)
                want = np.mean(reps["agent"]) - np.mean(reps["baseline"])
                assert row["abs_diff"] == pytest.approx(want, rel=PERCENTILE_REL, abs=0.05), (uri, load["key"])
                assert row["ci_low"] <= row["abs_diff"] <= row["ci_high"], row
    # One trail per cell across the agent versions.
    trails = {c["trail_id"] for run in recorded.values() for c in run["cells"]}
    assert len(trails) == len(next(iter(recorded.values()))["cells"])


def test_easegress_shape(api) -> None:  # type: ignore[no-untyped-def]
    http, runs = api
    [run] = runs("easegress-router").values()
    meta, files = _upload("easegress-router", "routers")
    expected = Expected()
    for spec, path in zip(meta["files"], files, strict=True):
        expected.add(spec["variant"], _load_key(spec["load"]), _hey_rows(_read(path), spec["scenario"], spec["started_ms"]))
    assert {k[0] for k in expected.parts} == {"ordered-v1", "ordered-v2", "radixtree"}
    assert {k[1] for k in expected.parts} == {"static", "prefix", "regexp"}
    assert sorted({ld["value"] for ld in run["loads"]}) == [50, 100, 120]
    assert len(expected.parts) == 27
    cells = _index(run)
    for key in expected.parts:
        _check_cell(cells[key], expected.cell(key), key, start_ms_rounded=True)
    # The ratios the run page shows next to each variant: its throughput over ordered-v1's.
    r = http.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": "throughput"})
    assert r.status_code == 200, r.text
    rows = {(o["variant"], o["cell"]["scenario"], o["cell"]["load_key"]): o["result"] for o in r.json()["items"]}
    ratios = {}
    for variant, scenario, load_key in expected.parts:
        if variant == "ordered-v1":
            continue
        v, ref = expected.cell((variant, scenario, load_key)), expected.cell(("ordered-v1", scenario, load_key))
        ratio = v["throughput"] / ref["throughput"]
        slack = 2 / 1000.0 / v["span_s"] + 2 / 1000.0 / ref["span_s"]   # each span within 2 ms (_check_cell)
        assert rows[(variant, scenario, load_key)]["rel_diff"] + 1 == pytest.approx(ratio, rel=slack)
        ratios[(variant, scenario, load_key)] = ratio
    # The seed's finding holds on this machine: the radix tree is many times faster on regexp routes.
    for load in run["loads"]:
        assert ratios[("radixtree", "regexp", load["key"])] > 5, ratios


def test_pts_shape(api) -> None:  # type: ignore[no-untyped-def]
    http, runs = api
    [run] = runs("pts-go").values()
    meta, files = _upload("pts-go", "pair")
    expected = Expected()
    for spec, path in zip(meta["files"], files, strict=True):
        if spec["format"] == "k6-json" and not spec.get("series_only"):
            expected.add(spec["variant"], _load_key(spec["load"]), _k6_rows(_read(path)))
    [load] = run["loads"]
    assert (load["kind"], load["value"]) == ("rate", 1000)
    cells = _index(run)
    for key in expected.parts:
        _check_cell(cells[key], expected.cell(key), key, start_ms_rounded=True)
    # CPU and memory of both processes of each variant: the mean of each measured step's values.
    variants = {v["id"]: v["name"] for v in run["variants"]}
    got = {(variants[c["variant_id"]], c["process"]): c for c in run["process_cells"]}
    steps = {k: v for k, v in _resources(meta, files).items() if k[1]}
    assert {(v, p) for v, p, _ in steps} == {(v, p) for v in ("no-agent", "agent") for p in ("consumer", "provider")}
    for (variant, process, _), values in steps.items():
        assert len(values) == 3
        for metric in ("cpu_pct", "rss_mb"):
            assert got[(variant, process)][metric] == pytest.approx(np.mean([s[metric] for s in values]), rel=1e-9)
    r = http.get(f"/api/v1/runs/{run['slug']}/overheads", params={"metric": "cpu_pct"})
    assert r.status_code == 200, r.text
    processes = {o["cell"]["process"] for o in r.json()["items"] if o["variant"] == "agent"}
    assert {"consumer", "provider"} <= processes

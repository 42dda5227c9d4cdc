"""Uploads through the API, ingestion by a real Celery worker, numbers checked against numpy."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from infra.localstack import wait_until
from tests.support.jtl import independent_cells, write_jtl
from tests.support.series import throughput
from tests.support.api import hey_csv as _hey_csv
from tests.support.api import upload, wait_run


def test_jmeter_ab_upload_gives_seed_shaped_cells_equal_to_numpy(client, worker, make_project, scratch):
    slug, token = make_project()
    baseline = write_jtl(scratch / "baseline.jtl", seed=1)
    agent = write_jtl(scratch / "agent.jtl", seed=2, slowdown=1.3)
    r = upload(client, slug, token, [("baseline", baseline), ("agent", agent)],
               {"agent_version": "2.1.0", "environment": {"cpus": 4, "memory_mb": 16384, "os": "Linux"}})
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["permalink"].endswith(f"/r/{body['run']}")
    run = wait_run(client, body["run"])
    assert run["status"] == "completed", run["status_detail"]

    variants = {v["id"]: v for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l for l in run["loads"]}
    assert [v["name"] for v in run["variants"]] == ["baseline", "agent"]
    assert [v["is_reference"] for v in run["variants"]] == [True, False]
    assert sorted((l["kind"], l["value"]) for l in run["loads"]) == [("threads", 10), ("threads", 20), ("threads", 50)]

    for name, path in (("baseline", baseline), ("agent", agent)):
        expected = independent_cells(path)
        got = {(scenarios[c["scenario_id"]], int(loads[c["load_id"]]["value"])): c for c in run["cells"]
               if variants[c["variant_id"]]["name"] == name and scenarios[c["scenario_id"]] != "*"}
        assert set(got) == set(expected)
        for key, exp in expected.items():
            cell = got[key]
            assert cell["count"] == exp["count"]
            assert cell["errors"] == exp["errors"]
            assert cell["latency_mean"] == pytest.approx(exp["latency_mean"], rel=1e-12)
            assert cell["latency_p75"] == pytest.approx(exp["latency_p75"], rel=1e-3)
            assert cell["latency_p99"] == pytest.approx(exp["latency_p99"], rel=1e-3)
            assert cell["throughput"] == pytest.approx(exp["throughput"], rel=1e-9)

    # Any percentile from the stored histograms, e.g. p87.5.
    pct = client.get(f"/api/v1/runs/{body['run']}/percentiles", params={"p": [87.5]}).json()["items"]
    assert len(pct) == len([c for c in run["cells"] if c["has_histogram"]])

    series = client.get(f"/api/v1/runs/{body['run']}/series", params={"metric": "throughput"}).json()["items"]
    assert series and all(len(s["t_ms"]) == len(s["values"]) for s in series)
    # Raw files are kept byte for byte.
    raw = client.get(run["files"][0]["download_url"])
    assert raw.status_code == 200 and raw.content == baseline.read_bytes()


def test_idempotency_key_makes_one_run(client, worker, make_project, scratch):
    slug, token = make_project()
    f = write_jtl(scratch / "a.jtl", seed=3, per_group=50)
    first = upload(client, slug, token, [("baseline", f)], key="ci-build-42")
    second = upload(client, slug, token, [("baseline", f)], key="ci-build-42")
    assert first.status_code == 202 and second.status_code == 200
    assert first.json()["run"] == second.json()["run"]
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["total"] == 1


def test_gzip_upload_is_accepted_and_bomb_rejected(client, worker, make_project, scratch):
    slug, token = make_project()
    plain = write_jtl(scratch / "a.jtl", seed=4, per_group=50)
    gz = scratch / "a.jtl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    r = upload(client, slug, token, [("baseline", gz)])
    assert r.status_code == 202, r.text
    assert wait_run(client, r.json()["run"])["status"] == "completed"

    bomb = scratch / "bomb.jtl.gz"
    bomb.write_bytes(gzip.compress(b"0" * (300 * 1024 * 1024), compresslevel=9))
    r = upload(client, slug, token, [("baseline", bomb)])
    assert r.status_code == 413
    assert "decompression bomb" in r.json()["detail"]
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["total"] == 1


def test_a_gzip_upload_with_a_broken_deflate_stream_is_refused_and_nothing_stored(client, make_project, scratch):
    """A gzip header followed by a damaged stream (zlib raises its own error, not an OSError): 400 naming the
    file, not a 500, and no run."""
    slug, token = make_project()
    packed = bytearray(gzip.compress(write_jtl(scratch / "a.jtl", seed=4, per_group=50).read_bytes()))
    packed[40:60] = bytes(255 - b for b in packed[40:60])   # past the 10-byte header, inside the deflate data
    broken = scratch / "broken.jtl.gz"
    broken.write_bytes(bytes(packed))
    with pytest.raises(Exception, match="invalid"):
        gzip.decompress(bytes(packed))   # the stream really is broken
    r = upload(client, slug, token, [("baseline", broken)])
    assert r.status_code == 400, r.text
    body = r.json()
    assert (body["error"], body["code"], body["file"]) == ("InvalidResultFile", "invalid_result_file", "broken.jtl.gz")
    assert "corrupt compressed file" in body["detail"]
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["total"] == 0


def stored_blobs(infra) -> list[str]:
    blobs = Path(infra["BENCHTRAIL_DATA_DIR"]) / "blobs"
    return sorted(p.name for p in blobs.rglob("*") if p.is_file()) if blobs.exists() else []


@pytest.mark.parametrize("content,line,field,words", [
    (b"", None, None, "empty"),
    (b"timeStamp,elapsed,label,responseCode,success\n1700000000000,12,a,200,true\n1700000000100,abc,a,200,true\n",
     3, "elapsed", "number"),
    (b"hello world\nthis is not a result file\n", 1, None, "unrecognised result file bad.jtl"),
])
def test_bad_file_is_rejected_with_place_and_nothing_stored(client, make_project, scratch, infra,
                                                            content, line, field, words):
    slug, token = make_project()
    bad = scratch / "bad.jtl"
    bad.write_bytes(content)
    before = stored_blobs(infra)
    r = upload(client, slug, token, [("baseline", bad)])
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["error"] == "InvalidResultFile" and body["file"] == "bad.jtl"
    assert (body["line"], body["field"]) == (line, field), body
    assert words in body["reason"].lower()
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["total"] == 0
    assert stored_blobs(infra) == before


def test_upload_over_size_limit_is_413(client, make_project):
    slug, token = make_project()
    r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}",
                                                              "Content-Length": str(10 * 1024 ** 4)},
                    content=b"x")
    assert r.status_code == 413


def test_metadata_errors_are_422_naming_the_field(client, make_project, scratch):
    slug, token = make_project()
    f = write_jtl(scratch / "a.jtl", seed=5, per_group=10)
    r = upload(client, slug, token, [("baseline", f)], {"reference": "nope"})
    assert r.status_code == 422 and "reference 'nope'" in r.json()["detail"]
    r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                    data={"metadata": json.dumps({"files": [{"variant": "a"}], "agent_versionx": 1})},
                    files=[("files", ("a.jtl", f.read_bytes()))])
    assert r.status_code == 422 and "agent_versionx" in r.json()["detail"]


def test_malformed_forms_are_refused_naming_the_problem_and_leave_nothing(client, infra, make_project, scratch):
    slug, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    jtl = write_jtl(scratch / "a.jtl", seed=5, per_group=10).read_bytes()
    meta = json.dumps({"files": [{"variant": "a"}]})
    before = stored_blobs(infra)
    part = (b'--b\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n' + meta.encode() + b"\r\n"
            b'--b\r\nContent-Disposition: form-data; name="files"; filename="a.jtl"\r\n\r\n' + jtl)
    cases = [
        ({"Content-Type": "application/json"}, b"{}", 400, "InvalidBody", "multipart/form-data"),
        ({"Content-Type": "multipart/form-data; boundary=b"}, part, 400, "InvalidBody", "closing boundary"),
        ({"Content-Type": "multipart/form-data; boundary=b"}, b"--b--\r\n", 422, "InvalidRequest", "metadata"),
        ({"Content-Type": "multipart/form-data; boundary=b"}, part + b"\r\n--b--\r\n", 202, None, None),
    ]
    for headers, body, status, kind, words in cases:
        r = client.post(f"/api/v1/projects/{slug}/runs", headers={**auth, **headers}, content=body)
        assert r.status_code == status, r.text
        if kind:
            assert r.json()["error"] == kind and words in r.json()["detail"], r.text
    # The metadata missing, or sent as a file: named.
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth, files=[("files", ("a.jtl", jtl))])
    assert r.status_code == 422 and r.json()["detail"].startswith("metadata:"), r.text
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth,
                    files=[("metadata", ("m.json", meta.encode())), ("files", ("a.jtl", jtl))])
    assert r.status_code == 422 and "sent as a file part" in r.json()["detail"], r.text
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["total"] == 1     # the well-formed one
    assert len(set(stored_blobs(infra)) - set(before)) <= 1
    assert list((Path(infra["BENCHTRAIL_DATA_DIR"]) / "tmp").glob("upload-*")) == []


def test_an_unknown_project_or_a_missing_role_is_answered_before_the_body_is_read(client, make_project):
    slug, viewer = make_project(role="viewer")
    read = {"chunks": 0}

    def body():  # type: ignore[no-untyped-def]
        for _ in range(64):
            read["chunks"] += 1
            yield b"x" * 65536

    headers = {"Authorization": f"Bearer {viewer}", "Content-Type": "multipart/form-data; boundary=b"}
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=headers, content=body())
    assert r.status_code == 403 and read["chunks"] <= 1, (r.text, read)
    read["chunks"] = 0
    r = client.post("/api/v1/projects/no-such-project/runs", headers=headers, content=body())
    assert r.status_code == 404 and read["chunks"] <= 1, (r.text, read)


def test_run_list_filters(client, worker, make_project, scratch):
    slug, token = make_project()
    f = write_jtl(scratch / "a.jtl", seed=6, per_group=10)
    for version, branch in (("1.0", "main"), ("1.1", "main"), ("1.1", "feature")):
        assert upload(client, slug, token, [("baseline", f)],
                      {"agent_version": version, "branch": branch, "labels": {"ci": "yes"}}).status_code == 202
    runs = lambda **p: client.get(f"/api/v1/projects/{slug}/runs", params=p).json()  # noqa: E731
    assert runs()["total"] == 3
    assert runs(agent_version="1.1")["total"] == 2
    assert runs(agent_version="1.1", branch="main")["total"] == 1
    assert runs(label="ci:yes", per_page=2)["total"] == 3 and len(runs(label="ci:yes", per_page=2)["items"]) == 2
    assert runs(label="ci:no")["total"] == 0


def test_repetitions_of_a_cell_merge_exactly(client, worker, make_project, scratch):
    """Two files of the same variant and load (interleaved A/B/A/B repetitions) make one cell whose
    numbers are those of all samples together."""
    slug, token = make_project()
    rep1 = write_jtl(scratch / "rep1.jtl", seed=11, per_group=300, groups=(10,))
    rep2 = write_jtl(scratch / "rep2.jtl", seed=12, per_group=500, groups=(10,), slowdown=1.2)
    r = upload(client, slug, token, [("baseline", rep1), ("baseline", rep2)])
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    import csv
    import numpy as np
    for label in ("API-URI-owner-3spans", "API-URI-vets-10spans"):
        rows = [row for p in (rep1, rep2) for row in csv.DictReader(p.open()) if row["label"] == label]
        el = np.array([float(row["elapsed"]) for row in rows])
        cell = next(c for c in run["cells"] if scenarios[c["scenario_id"]] == label)
        assert cell["count"] == len(rows)
        assert cell["latency_mean"] == pytest.approx(el.mean(), rel=1e-12)
        assert cell["latency_p75"] == pytest.approx(np.percentile(el, 75, method="inverted_cdf"), rel=1e-3)
        assert cell["latency_p99"] == pytest.approx(np.percentile(el, 99, method="inverted_cdf"), rel=1e-3)
        assert cell["latency_max"] == el.max() and cell["latency_min"] == el.min()
        assert len(cell["extra"]["repetitions"]) == 2


def test_each_jmh_param_combination_is_a_cell_of_its_own(client, worker, make_project):
    """jcasbin's JMH JSON runs `enforce` over 12 @Param combinations (and 4 more benchmarks over theirs):
    each result is its own scenario and cell with the file's own score, none merged with another."""
    from tests.support.corpus import real

    path = real("jmh-json/casbin_jcasbin_jmh-1.37_thrpt-ss_params.json")
    results = json.loads(path.read_text())
    slug, token = make_project()
    r = upload(client, slug, token, [({"variant": "baseline", "format": "jmh-json"}, path)])
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    got = {(scenarios[c["scenario_id"]], c["mode"]): c["score"] for c in run["cells"]}
    expected = {}
    for result in results:
        named = ", ".join(f"{k}={v}" for k, v in sorted(result.get("params", {}).items()))
        expected[(f"{result['benchmark']}({named})" if named else result["benchmark"], result["mode"])] = \
            result["primaryMetric"]["score"]
    assert len(expected) == len(results) == 37
    assert got == expected


def test_hey_repetitions_are_placed_in_time_by_their_start(client, worker, make_project, scratch):
    """hey's offsets count from its own start: two repetitions of one load level, each told when it started
    (`started_ms`, as the runner sends), follow each other on the series' time axis instead of both
    starting at 0 (which drew them over each other, zigzagging, on the run page)."""
    import numpy as np

    slug, token = make_project()
    rng = np.random.default_rng(7)
    offsets = [sorted(rng.uniform(0, 3, 40).round(4).tolist()), sorted(rng.uniform(0, 2, 25).round(4).tolist())]
    starts = [1_717_200_000_400, 1_717_200_007_700]
    r = upload(client, slug, token, [
        ({"variant": "baseline", "format": "hey-csv", "load": {"kind": "concurrency", "value": 1}, "started_ms": start},
         _hey_csv(scratch / f"rep{i}.csv", offs)) for i, (start, offs) in enumerate(zip(starts, offsets))])
    assert r.status_code == 202, r.text
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    series = client.get(f"/api/v1/runs/{run['slug']}/series", params={"metric": "throughput"}).json()["items"]
    whole = next(s for s in series if s["scenario_id"] is None)
    assert whole["interval_ms"] == 1000
    # Independently: each request at its offset, the file moved by its start rounded to whole seconds
    # (…000_400 -> …000_000, …007_700 -> …008_000); the rate over the part of each second the file ran.
    files = []
    for start, offs in zip(starts, offsets):
        at = int(round(start / 1000)) * 1000 + np.round(np.array(offs) * 1000)
        files.append((at, at + 1.2))                    # every request took 1.2 ms
    expected_t, expected = throughput(files, 1000)
    assert whole["t_ms"] == expected_t
    assert whole["values"] == pytest.approx(expected, rel=1e-6)   # hey times are rounded to 0.1 ms


def test_hey_repetitions_without_their_start_follow_each_other_in_upload_order(client, worker, make_project, scratch):
    """Uploaded without `started_ms`, a variant's hey files are laid end to end in upload order, each
    from the first whole interval after the one before (both at 0 drew over each other: every t twice,
    the line zigzagging between the repetitions); each variant begins at 0."""
    import numpy as np

    slug, token = make_project()
    rng = np.random.default_rng(5)
    offsets = [sorted(rng.uniform(0, 2.5, 60).round(4).tolist()), sorted(rng.uniform(0, 3.2, 80).round(4).tolist()),
               sorted(rng.uniform(0, 2.0, 50).round(4).tolist())]
    latencies = [rng.uniform(0.001, 0.3, len(o)).round(4).tolist() for o in offsets]
    hey = {"format": "hey-csv", "load": {"kind": "concurrency", "value": 1}}
    files = [_hey_csv(scratch / f"h{i}.csv", offs, lats) for i, (offs, lats) in enumerate(zip(offsets, latencies))]
    r = upload(client, slug, token, [({"variant": "baseline", **hey}, files[0]), ({"variant": "agent", **hey}, files[2]),
                                     ({"variant": "baseline", **hey}, files[1])])
    assert r.status_code == 202, r.text
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    variants = {v["id"]: v["name"] for v in run["variants"]}
    series = {variants[s["variant_id"]]: s for s in client.get(
        f"/api/v1/runs/{run['slug']}/series", params={"metric": "throughput"}).json()["items"] if s["scenario_id"] is None}
    assert series["baseline"]["interval_ms"] == series["agent"]["interval_ms"] == 1000
    # Independently: each file's requests from its offsets (in whole ms, as ingest keeps start times) and
    # its rate per second of the part it ran; the second baseline file moved to the whole second after the
    # first one's last end.
    start = [np.round(np.array(o) * 1000) for o in offsets]
    end = [s + np.array(lat) * 1000 for s, lat in zip(start, latencies)]
    shift = -(-float(end[0].max()) // 1000) * 1000
    first_t, first = throughput([(start[0], end[0])], 1000)
    second_t, second = throughput([(start[1] + shift, end[1] + shift)], 1000)
    assert shift == 3000 and series["baseline"]["t_ms"] == first_t + second_t
    assert series["baseline"]["values"] == pytest.approx(first + second, rel=1e-6)
    agent_t, agent = throughput([(start[2], end[2])], 1000)
    assert series["agent"]["t_ms"] == agent_t and agent_t[0] == 0
    assert series["agent"]["values"] == pytest.approx(agent, rel=1e-6)


def test_the_cli_tells_when_each_hey_file_started(live_api, worker, make_project, scratch):
    """`--variant NAME=FILE;started=…` (ms since the epoch, or ISO 8601 with a zone): the two repetitions'
    series follow each other; a time without a zone is a usage error naming the option."""
    import os
    import subprocess

    from infra.localstack import VENV_BIN

    slug, token = make_project()
    first, second = _hey_csv(scratch / "r1.csv", [0.1, 0.5, 1.2]), _hey_csv(scratch / "r2.csv", [0.2, 1.4, 1.6])
    env = {**os.environ, "BENCHTRAIL_URL": live_api, "BENCHTRAIL_TOKEN": token}
    cli = [str(VENV_BIN / "benchtrail"), "upload", "--project", slug, "--json"]
    done = subprocess.run([*cli, "--wait", "--variant", f"base={first};format=hey-csv;started=1717200000000",
                           "--variant", f"base={second};format=hey-csv;started=2024-06-01T00:00:05.000+00:00"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["run"]
    import httpx

    with httpx.Client() as http:
        series = http.get(f"{live_api}/api/v1/runs/{run}/series", params={"metric": "throughput"},
                          headers={"Authorization": f"Bearer {token}"}).json()["items"]
    whole = next(s for s in series if s["scenario_id"] is None)
    # 2024-06-01T00:00:00Z is 1717200000000 ms: the first file at 0 s and 1 s, the second at 5 s and 6 s.
    assert whole["t_ms"] == [1717200000000, 1717200001000, 1717200005000, 1717200006000]
    # Requests per second of the part of each second a file ran: 2 over 0.1–1 s, 1 over 1–1.2012 s, ...
    assert whole["values"] == pytest.approx([2 / 0.9, 1 / 0.2012, 1 / 0.8, 2 / 0.6012], rel=1e-9)
    bad = subprocess.run([*cli, "--variant", f"base={first};started=2024-06-01T00:00:05"], env=env,
                         capture_output=True, text=True, timeout=60)
    said = " ".join(bad.stderr.split())   # the console wraps long lines
    assert bad.returncode == 2 and "'started=2024-06-01T00:00:05' needs" in said and "zone" in said, said


def test_files_that_ran_at_the_same_time_make_one_series_of_all_their_samples(client, worker, make_project, scratch):
    """A step of two scenarios runs one hey per scenario at once (the runner's warm-up does): the load
    level's series counts both files' requests in each interval and takes its percentiles over all of them,
    as numpy does on the two files' rows together; each scenario's series stays its own file's."""
    import numpy as np

    slug, token = make_project()
    rng = np.random.default_rng(11)
    start = 1_717_200_000_000
    rows = {name: (sorted(rng.uniform(0, 4, n).round(4).tolist()), rng.lognormal(np.log(0.002), 0.6, n).round(4).tolist())
            for name, n in (("a", 300), ("b", 200))}
    r = upload(client, slug, token, [
        ({"variant": "baseline", "format": "hey-csv", "scenario": name, "started_ms": start,
          "load": {"kind": "concurrency", "value": 2}}, _hey_csv(scratch / f"{name}.csv", offs, lats))
        for name, (offs, lats) in rows.items()])
    assert r.status_code == 202, r.text
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    series = client.get(f"/api/v1/runs/{run['slug']}/series").json()["items"]

    def expected(names):
        by_t: dict[int, list[float]] = {}
        for name in names:
            for o, lat in zip(*rows[name]):
                by_t.setdefault(start + int(round(o * 1000)) // 1000 * 1000, []).append(lat * 1000)
        return by_t

    def started_ended(name):
        offs, lats = rows[name]
        at = start + np.round(np.array(offs) * 1000)
        return at, at + np.round(np.array(lats) * 1e6) / 1000

    for scenario_id, names in ((None, ("a", "b")), *((i, (n,)) for i, n in scenarios.items() if n in rows)):
        by_t = expected(names)
        got = {s["metric"]: s for s in series if s["scenario_id"] == scenario_id}
        assert got["throughput"]["interval_ms"] == 1000
        # Both files' requests per second of the time either ran (the union of their spans).
        expected_t, rates = throughput([started_ended(n) for n in names], 1000)
        assert got["throughput"]["t_ms"] == expected_t, names
        assert got["throughput"]["values"] == pytest.approx(rates, rel=1e-12)
        assert got["latency_p50"]["t_ms"] == sorted(by_t)
        for metric, p in (("latency_p50", 50), ("latency_p99", 99)):
            want = [float(np.percentile(by_t[t], p, method="inverted_cdf")) for t in sorted(by_t)]
            assert got[metric]["values"] == pytest.approx(want, abs=1e-9), (names, metric)


def test_upload_while_the_broker_is_down_is_ingested_later(client, worker, make_project, scratch, infra):
    """Nothing accepted is lost: the upload commits, the job cannot be sent, the sweeper queues it."""
    from datetime import datetime, timedelta, timezone

    from sqlalchemy import select, update

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Run
    from benchtrail_worker.tasks.sweeper import sweep
    from infra.localstack import Redis, shutdown_redis

    slug, token = make_project()
    f = write_jtl(scratch / "a.jtl", seed=21, per_group=40)
    port = int(infra["_redis_port"])
    shutdown_redis(port)
    try:
        r = upload(client, slug, token, [("baseline", f)])
        assert r.status_code == 202, r.text
    finally:
        Redis(port=port).start()
    run_slug = r.json()["run"]
    assert client.get(f"/api/v1/runs/{run_slug}").json()["status"] == "ingesting"
    with unit_of_work() as session:  # as if five minutes had passed
        session.execute(update(Run).where(Run.slug == run_slug)
                        .values(heartbeat_at=datetime.now(timezone.utc) - timedelta(minutes=6)))
    swept = datetime.now(timezone.utc)
    sweep.run()
    # Queued again by the sweep: this run's own row says it (the sweep's count covers every run of the database).
    with unit_of_work() as session:
        assert session.scalar(select(Run.heartbeat_at).where(Run.slug == run_slug)) >= swept - timedelta(seconds=5)
    assert wait_run(client, run_slug)["status"] == "completed"


def test_a_worker_ended_by_a_fault_is_restarted_and_ingests(client, worker, make_project, scratch):
    """The Celery process under benchtrail-supervise dies (as on kombu's crash after a second broker loss):
    the supervisor starts it again and an upload made afterwards is ingested."""
    import os
    import signal

    import psutil

    supervisor = psutil.Process(worker.proc.pid)
    (celery,) = supervisor.children()
    os.kill(celery.pid, signal.SIGKILL)
    wait_until(lambda: [c.pid for c in supervisor.children()] not in ([], [celery.pid]), 30,
               "the supervisor to start the worker again")
    assert worker.alive()
    assert "supervised process exited, restarting" in worker.output()
    slug, token = make_project()
    f = write_jtl(scratch / "after.jtl", seed=23, per_group=40)
    r = upload(client, slug, token, [("baseline", f)])
    assert r.status_code == 202, r.text
    assert wait_run(client, r.json()["run"])["status"] == "completed"


def test_an_error_deep_in_a_large_file_fails_the_run_naming_the_line(client, worker, make_project, scratch):
    """The upload reads only the head of a large JTL; the worker's one full parse finds line 150,000
    malformed and fails the run with the file, line, field and reason an upload error would give, and
    nothing of the run's cells or series is written."""
    from sqlalchemy import func, select

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Cell, Run, Series

    slug, token = make_project()
    path = write_jtl(scratch / "deep.jtl", seed=31, per_group=34_000)   # 204,000 samples
    lines = path.read_bytes().split(b"\n")
    assert len(lines) > 200_000
    row = lines[150_000 - 1].split(b",")
    row[1] = b"abc"
    lines[150_000 - 1] = b",".join(row)
    path.write_bytes(b"\n".join(lines))
    r = upload(client, slug, token, [("baseline", path)])
    assert r.status_code == 202, r.text
    run = wait_run(client, r.json()["run"], timeout=180)
    assert run["status"] == "failed"
    detail = run["status_detail"]
    assert (detail["file"], detail["line"], detail["field"]) == ("deep.jtl", 150_000, "elapsed"), detail
    assert run["cells"] == [] and run["variants"] == []
    assert client.get(f"/api/v1/runs/{run['slug']}/series", params={"metric": "throughput"}).json()["items"] == []
    with unit_of_work() as session:
        run_id = session.scalar(select(Run.id).where(Run.slug == run["slug"]))
        assert session.scalar(select(func.count()).select_from(Cell).where(Cell.run_id == run_id)) == 0
        assert session.scalar(select(func.count()).select_from(Series).where(Series.run_id == run_id)) == 0

    # The same error within the head is refused at upload with the same file, field and reason.
    early = scratch / "deep.jtl"
    lines[150_000 - 1], lines[2] = lines[2], lines[150_000 - 1]
    early.write_bytes(b"\n".join(lines))
    refused = upload(client, slug, token, [("baseline", early)])
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert (body["file"], body["line"], body["field"], body["reason"]) == \
        ("deep.jtl", 3, "elapsed", detail["reason"])


def test_concurrent_uploads_of_a_new_environment_all_succeed(live_api, worker, make_project, scratch):
    """Parallel CI jobs uploading to an environment the project has not seen yet: each upload is accepted
    (none answers 409 because another created the environment first) and the project has it once."""
    import httpx
    from concurrent.futures import ThreadPoolExecutor
    from sqlalchemy import func, select

    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Environment, Project

    slug, token = make_project()
    files = [write_jtl(scratch / f"env-race-{i}.jtl", seed=100 + i, per_group=20) for i in range(8)]
    meta = {"files": [{"variant": "baseline"}], "environment": {"name": "race", "cpus": 2, "os": "Linux"}}

    def post(path: Path) -> int:
        with httpx.Client(base_url=live_api, timeout=60) as http:
            return http.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                             data={"metadata": json.dumps(meta)},
                             files=[("files", (path.name, path.read_bytes()))]).status_code

    # The token is used once first: its last-used time is then fresh and the uploads do not queue on its row.
    with httpx.Client() as http:
        assert http.get(f"{live_api}/api/v1/projects/{slug}", headers={"Authorization": f"Bearer {token}"}).is_success
    with ThreadPoolExecutor(len(files)) as pool:
        statuses = list(pool.map(post, files))
    assert statuses == [202] * len(files)
    with unit_of_work() as session:
        environments = session.scalar(select(func.count()).select_from(Environment).join(
            Project, Project.id == Environment.project_id).where(Project.slug == slug))
    assert environments == 1

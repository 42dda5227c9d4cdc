"""Results that survive: a real runner runs hey against a real local target, and a loopback proxy between
the runner and the real API breaks the results upload (cut off, answer lost, held for long). The run
still completes with the right cells, exactly once, and the sweeper leaves a heartbeating upload alone."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import time
from datetime import datetime
from urllib.parse import urlsplit

import numpy as np
import pytest
from sqlalchemy import func, select

from infra.localstack import VENV_BIN, wait_until
from tests.support.env import stack_env as _env
from tests.support.api import auth as admin_headers
from tests.support.api import hey_plan, post_plan, run_of, start
from tests.support.flaky_proxy import FlakyProxy
from tests.support.outputs import plain

# The first test also waits for the session's stack (PostgreSQL, Redis, API, worker) on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

REQUESTS = 400


@pytest.fixture
def proxy_to(live_api):  # type: ignore[no-untyped-def]
    made: list[FlakyProxy] = []

    def make(mode: str, **kw: float) -> FlakyProxy:
        u = urlsplit(live_api)
        p = FlakyProxy((u.hostname or "127.0.0.1", u.port or 80), mode, **kw)
        made.append(p)
        return p

    yield make
    for p in made:
        p.stop()


def watch(client, run_slug: str, timeout: float) -> tuple[dict, list[tuple[float, str]]]:  # type: ignore[no-untyped-def]
    """Poll the run until it ends, recording every status seen with when it was first seen."""
    seen: list[tuple[float, str]] = []

    def ended() -> dict | None:
        run = run_of(client, run_slug)
        if not seen or seen[-1][1] != run["status"]:
            seen.append((time.monotonic(), run["status"]))
        return run if run["status"] in ("completed", "failed", "cancelled") else None

    return wait_until(ended, timeout, f"run {run_slug} to end", interval=0.2), seen


def heartbeat_of(run_id: int) -> datetime | None:
    """The run's last heartbeat, as the sweeper reads it (the run document does not show it)."""
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import Run

    with unit_of_work() as session:
        return session.scalar(select(Run.heartbeat_at).where(Run.id == run_id))


def stored_files(run_id: int) -> int:
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.models import RunFile

    with unit_of_work() as session:
        return int(session.scalar(select(func.count()).select_from(RunFile).where(RunFile.run_id == run_id)) or 0)


def check_cells(client, run: dict, requests: int = REQUESTS) -> None:  # type: ignore[no-untyped-def]
    """The hey cell equals an independent reading of the raw CSV the runner sent (zstd, as stored)."""
    [csv_file] = [f for f in run["files"] if f["format"].startswith("hey")]
    assert csv_file["filename"].endswith(".zst")
    raw = plain(client.get(csv_file["download_url"]).content)
    rows = list(csv.DictReader(io.StringIO(raw.decode())))
    latencies = np.array([float(r["response-time"]) * 1000 for r in rows])
    errors = sum(1 for r in rows if int(r["status-code"]) >= 400)
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    [cell] = [c for c in run["cells"] if scenarios[c["scenario_id"]] == "slow" and c["count"] is not None]
    assert len(rows) == requests
    assert cell["count"] == requests and cell["errors"] == errors
    assert cell["latency_mean"] == pytest.approx(float(latencies.mean()), rel=1e-3)
    assert cell["latency_max"] == pytest.approx(float(latencies.max()), rel=1e-3)


def test_api_cut_off_during_the_upload_the_run_still_completes(client, make_project, start_runner, worker,
                                                              go_target, proxy_to, tmp_path):
    """The API vanishes in the middle of the results upload (connections reset, refused for 2 s), then
    refuses the results for 6 s more while heartbeats pass: the runner retries with back-off and the
    same key, and exactly one upload is stored."""
    slug, token = make_project(role="admin")
    proxy = proxy_to("cut", outage_s=2.0, results_down_s=6.0)
    workdirs = tmp_path / "work"
    runner = start_runner("pool-cut", "runner-cut", api_url=proxy.url, BENCHTRAIL_RUNNER_WORK_DIR=str(workdirs))
    post_plan(client, slug, token, hey_plan("cut", "pool-cut", go_target, concurrency=4, requests=REQUESTS))
    run_slug = start(client, slug, token, "cut")
    run, seen = watch(client, run_slug, 180)
    assert run["status"] == "completed", run["status_detail"]
    assert [s for _, s in seen if s == "failed"] == []

    # Broken: the first attempt mid-body, then each retry inside the 8 s; one attempt got through.
    assert proxy.faults >= 2 and proxy.results_requests == proxy.faults + 1
    assert proxy.fault_times[-1] - proxy.fault_times[0] < 2.0 + 6.0 + 1.0
    assert "upload: POST /api/v1/runs/" in "\n".join(run["progress"]["log"])
    assert stored_files(run["id"]) == len(run["files"])
    assert len({(f["variant"], f["format"], f["sha256"]) for f in run["files"]}) == len(run["files"])
    check_cells(client, run)
    # Acknowledged: the work directory is gone.
    wait_until(lambda: workdirs.is_dir() and not any(workdirs.iterdir()), 10, "the work directory to be removed")
    assert "results delivered" in runner.output()


def test_a_package_cut_mid_way_is_resumed_from_the_servers_offset(client, make_project, start_runner, worker,
                                                                   go_target, proxy_to, tmp_path):
    """The results package goes in 16 KiB chunks; the proxy cuts the connection in the middle of the first
    chunk at or past 48 KiB, then refuses connections for 2 s. The runner asks the API for its offset and
    goes on from there: the API receives the package about once (not the start again), commits it once,
    and the run completes with the right cells."""
    chunk, cut_offset, requests = 16 * 1024, 48 * 1024, 30_000
    # 20,000 requests made a package of 80-82 KiB (its gzip size follows the latencies): at the assertion's edge.
    slug, token = make_project(role="admin")
    proxy = proxy_to("cut_chunk", outage_s=2.0, cut_offset=cut_offset)
    workdirs = tmp_path / "work"
    runner = start_runner("pool-chunk", "runner-chunk", api_url=proxy.url, BENCHTRAIL_RUNNER_WORK_DIR=str(workdirs),
                          BENCHTRAIL_RUNNER_UPLOAD_CHUNK_BYTES=str(chunk))
    post_plan(client, slug, token, hey_plan("chunk", "pool-chunk", go_target, concurrency=4, requests=requests))
    run_slug = start(client, slug, token, "chunk")
    run, seen = watch(client, run_slug, 240)
    assert run["status"] == "completed", run["status_detail"]
    assert [s for _, s in seen if s == "failed"] == []

    package = sum(f["size"] for f in run["files"])  # what was stored is the package, file by file
    assert package > cut_offset + 2 * chunk, package  # the cut happened well inside the package
    assert proxy.faults == 1
    # Resumed, not restarted: after the cut the offsets go on from where the server was, never from 0.
    cut_at = next(o for o in proxy.chunk_offsets if o >= cut_offset)
    after = proxy.chunk_offsets[proxy.chunk_offsets.index(cut_at) + 1:]
    assert after and min(after) >= cut_at - chunk and 0 not in after, proxy.chunk_offsets
    # The server received fewer bytes than twice the package: the package once plus part of one chunk.
    assert package <= proxy.chunk_bytes < package + chunk, (proxy.chunk_bytes, package)
    assert proxy.chunk_bytes < 2 * package
    # The runner's own log has every wait (the run's progress log may miss the last ones: the results can be
    # committed before the next progress report).
    assert "resuming at byte" in runner.output(), runner.output()[-3000:]
    assert stored_files(run["id"]) == len(run["files"])
    check_cells(client, run, requests)
    wait_until(lambda: workdirs.is_dir() and not any(workdirs.iterdir()), 10, "the work directory to be removed")
    assert "results delivered" in runner.output()


def test_a_lost_answer_and_its_retry_store_the_results_once(client, make_project, start_runner, worker,
                                                           go_target, proxy_to):
    """The API stores the results but its answer never reaches the runner, which sends them again with
    the same Idempotency-Key: the second answer says duplicate and nothing is stored twice."""
    slug, token = make_project(role="admin")
    proxy = proxy_to("lose_answer")
    runner = start_runner("pool-lost", "runner-lost", api_url=proxy.url)
    post_plan(client, slug, token, hey_plan("lost", "pool-lost", go_target, concurrency=4, requests=REQUESTS))
    run_slug = start(client, slug, token, "lost")
    run, _ = watch(client, run_slug, 180)
    assert run["status"] == "completed", run["status_detail"]
    # The run completes as soon as the first (unanswered) upload is ingested; the retry follows.
    delivered = wait_until(lambda: [json.loads(line) for line in runner.output().splitlines()
                                    if '"results delivered"' in line and run_slug in line], 60,
                           "the runner to hear that its results were delivered")
    assert proxy.faults == 1 and proxy.results_requests == 2
    assert [d["duplicate"] for d in delivered] == [True]
    files = run["files"]
    assert stored_files(run["id"]) == len(files) == len({f["sha256"] for f in files})
    check_cells(client, run)


def test_a_long_heartbeating_upload_is_not_swept(client, make_project, start_runner, worker, beat, go_target,
                                                  proxy_to):
    """The upload is held until the run has stayed running, heartbeating, for 15 s (3 x the test's 5 s
    heartbeat timeout, beat sweeping every 2 s): the runner keeps its heartbeat during the upload, so the
    run is never failed."""
    slug, token = make_project(role="admin")
    proxy = proxy_to("hold")
    start_runner("pool-slow", "runner-slow", api_url=proxy.url)
    post_plan(client, slug, token, hey_plan("slow", "pool-slow", go_target, concurrency=4, requests=REQUESTS))
    run_slug = start(client, slug, token, "slow")
    wait_until(lambda: proxy.faults == 1, 180, "the results upload to be held")
    held_wall = time.time()

    def heartbeating_past_three_timeouts() -> bool:
        run = run_of(client, run_slug)
        assert run["status"] == "running", run["status_detail"]   # never swept while the upload is held
        beat_at = heartbeat_of(run["id"])
        return beat_at is not None and beat_at.timestamp() >= held_wall + 15.0

    wait_until(heartbeating_past_three_timeouts, 120, "a heartbeat 15 s into the held upload", interval=0.5)
    proxy.release.set()
    run, seen = watch(client, run_slug, 180)
    assert run["status"] == "completed", run["status_detail"]
    assert [s for _, s in seen if s == "failed"] == []
    assert proxy.faults == 1
    held_at = proxy.fault_times[0]
    ingesting_at = next(t for t, s in seen if s in ("ingesting", "completed"))
    assert ingesting_at - held_at >= 15.0 - 0.5  # the run really stayed running through the held upload
    check_cells(client, run)


def test_a_runner_that_gives_up_keeps_the_outputs_and_an_operator_resends_them(
        client, make_project, start_runner, worker, go_target, proxy_to, runner_token, live_api, infra, tmp_path):
    """The API refuses the results for longer than the runner retries (4 s): the run fails naming where
    the outputs are kept; the operator's re-send from that folder completes the run with the right cells,
    a second re-send is told they were already accepted, and other results for the run are refused."""
    from benchtrail_runner import delivery

    slug, token = make_project(role="admin")
    proxy = proxy_to("cut", outage_s=1.0, results_down_s=600.0)
    workdirs = tmp_path / "work"
    runner = start_runner("pool-keep", "runner-keep", api_url=proxy.url, BENCHTRAIL_RUNNER_WORK_DIR=str(workdirs),
                          BENCHTRAIL_RUNNER_UPLOAD_RETRY_S="4")
    post_plan(client, slug, token, hey_plan("keep", "pool-keep", go_target, concurrency=4, requests=REQUESTS))
    run_slug = start(client, slug, token, "keep")
    run, _ = watch(client, run_slug, 180)
    assert run["status"] == "failed"
    [kept] = list(workdirs.iterdir())
    package_dir = kept / "upload"
    assert (package_dir / delivery.MANIFEST).is_file()
    assert str(package_dir) in run["status_detail"]["reason"] and "results upload failed" in run["status_detail"]["reason"]
    assert "results not delivered; the work directory is kept" in runner.output()
    assert stored_files(run["id"]) == 0 and run["cells"] == []

    env = _env(infra, BENCHTRAIL_API_URL=live_api, BENCHTRAIL_RUNNER_TOKEN=runner_token)
    resend = [str(VENV_BIN / "python"), "-m", "benchtrail_runner.delivery", str(package_dir), "--retry-s", "30"]
    first = subprocess.run(resend, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert f"run {run_slug}: results accepted" in first.stdout
    run, _ = watch(client, run_slug, 120)
    assert run["status"] == "completed", run["status_detail"]
    assert "results delivered late" in run["status_detail"]["reason"]
    check_cells(client, run)
    n = stored_files(run["id"])

    again = subprocess.run(resend, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "results were already accepted" in again.stdout
    # Other results (another package, another key) for a run that has its results: refused.
    other = delivery.package(run_slug, delivery.Package.load(package_dir).metadata,
                             [p for p in delivery.Package.load(package_dir).files], tmp_path / "other")
    with pytest.raises(delivery.NotDelivered, match="409"):
        delivery.send(other, live_api, runner_token, retry_s=0)
    assert stored_files(run["id"]) == n
    # A project token never submits a plan run's results.
    r = client.post(f"/api/v1/runs/{run_slug}/results", headers=admin_headers(token),
                    data={"metadata": json.dumps({"files": [{"variant": "target"}]})},
                    files=[("files", ("x.csv", b"x"))])
    assert r.status_code == 403, r.text
    assert proxy.faults >= 2

"""Calls of the public API that many tests make: uploads, plans, and waiting for a run.

Waiting listens to the run's live events (the Redis channel every committed change of a run's status is
published on, `benchtrail.runstate.events`) instead of polling the whole run document: a poll every 50 ms
rendered the run in the test process, competing for the two cores with the worker it waited on. The run
is read once when listening starts (the state may already be reached) and again every few seconds in
case an event was missed (a test that takes Redis down), then once more, whole, when it is reached."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import psutil
import redis

from benchtrail.runstate.events import channel

FINISHED = ("completed", "failed", "cancelled")
RECHECK_S = 3.0


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def run_of(client, run_slug: str, token: str | None = None) -> dict:  # type: ignore[no-untyped-def]
    return client.get(f"/api/v1/runs/{run_slug}", headers=auth(token) if token else {}).json()


def wait_for_run(client, run_slug: str, reached: Callable[[dict[str, Any]], bool], timeout: float,  # type: ignore[no-untyped-def]
                 what: str, token: str | None = None) -> dict:
    """The run document once `reached(state)` holds for the run's state (`status`, `analysis_status`, ...)."""
    deadline = time.monotonic() + timeout
    url = os.environ["BENCHTRAIL_REDIS_URL"]
    listener = redis.Redis.from_url(url, socket_timeout=5).pubsub(ignore_subscribe_messages=True)
    try:
        try:
            listener.subscribe(channel(run_slug))
        except redis.RedisError:
            listener = None  # no broker (a test took it down): reading the run every few seconds must do
        state = run_of(client, run_slug, token)
        while not reached(state):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}; last state: "
                                   f"{ {k: state.get(k) for k in ('status', 'analysis_status', 'status_detail')} }")
            message = _next_event(listener, min(left, RECHECK_S))
            state = json.loads(message["data"]) if message else run_of(client, run_slug, token)
        return run_of(client, run_slug, token)
    finally:
        if listener is not None:
            listener.close()


def _next_event(listener: redis.client.PubSub | None, timeout: float) -> dict | None:
    if listener is None:
        time.sleep(timeout)
        return None
    try:
        return listener.get_message(timeout=timeout)
    except redis.RedisError:
        time.sleep(min(timeout, 0.5))
        return None


def wait_status(client, run_slug: str, statuses: Iterable[str], timeout: float,  # type: ignore[no-untyped-def]
                token: str | None = None) -> dict:
    wanted = tuple(statuses)
    return wait_for_run(client, run_slug, lambda s: s.get("status") in wanted, timeout,
                        f"run {run_slug} to reach {wanted}", token)


def wait_run(client, run_slug: str, timeout: float = 60, token: str | None = None) -> dict:  # type: ignore[no-untyped-def]
    """The run once its ingest ended (completed or failed)."""
    return wait_status(client, run_slug, ("completed", "failed"), timeout, token)


def wait_analysed(client, run_slug: str, timeout: float = 60, token: str | None = None) -> dict:  # type: ignore[no-untyped-def]
    """The run once completed and analysed (asserted)."""
    run = wait_for_run(client, run_slug, lambda s: s.get("status") in ("completed", "failed")
                       and (s.get("analysis_status") or "pending") != "pending", timeout,
                       f"run {run_slug} to be analysed", token)
    assert run["status"] == "completed" and run["analysis_status"] == "done", run
    return run


def upload(client, slug, token, files, meta_extra=None, key=None):  # type: ignore[no-untyped-def]
    """`files`: (variant name, or the file's whole FileIn entry, path) pairs."""
    meta = {"files": [v if isinstance(v, dict) else {"variant": v} for v, _ in files], **(meta_extra or {})}
    headers = auth(token)
    if key:
        headers["Idempotency-Key"] = key
    return client.post(f"/api/v1/projects/{slug}/runs", headers=headers, data={"metadata": json.dumps(meta)},
                       files=[("files", (p.name, p.read_bytes())) for _, p in files])


# -------------------------------------------------------------------------------------------- plans

def post_plan(client, slug: str, token: str, plan: dict) -> dict:  # type: ignore[no-untyped-def]
    r = client.post(f"/api/v1/projects/{slug}/plans", content=json.dumps(plan), headers={
        **auth(token), "Content-Type": "application/json"})
    assert r.status_code == 201, r.text
    return r.json()


def start(client, slug: str, token: str, name: str, **body) -> str:  # type: ignore[no-untyped-def]
    """Start plan `name`; the new run's slug."""
    r = client.post(f"/api/v1/projects/{slug}/plans/{name}/runs", json=body, headers=auth(token))
    assert r.status_code == 202, r.text
    return r.json()["slug"]


def hey_plan(name: str, pool: str, target: str, **load) -> dict:  # type: ignore[no-untyped-def]
    return {"version": 1, "name": name, "tool": "hey", "pool": pool,
            "variants": [{"name": "target", "role": "reference", "target": target,
                          "resources": {"source": "process"}}],
            "scenarios": [{"name": "slow", "path": "/slow"}], "loads": [load], "repetitions": 1}


def new_runner_token(name: str, pools: list[str] | None = None) -> str:
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.projects.service import create_token

    with unit_of_work() as session:
        return create_token(session, project=None, name=name, role="runner", pools=pools).token


def tool_processes(marker: str) -> list[psutil.Process]:
    """The load tools (hey, java, k6) whose command line names `marker`."""
    found = []
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            if p.info["name"] in ("hey", "java", "k6") and any(marker in a for a in p.info["cmdline"] or []):
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def hey_csv(path: Path, offsets_s: list[float], latencies_s: list[float] | None = None) -> Path:
    """A hey CSV of successful requests at `offsets_s` (hey's 0.1 ms steps)."""
    latencies_s = latencies_s or [0.0012] * len(offsets_s)
    rows = [f"{lat:.4f},0.0001,0.0000,0.0000,0.0011,0.0000,200,{o:.4f}" for o, lat in zip(offsets_s, latencies_s)]
    path.write_text("response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"
                    + "\n".join(rows) + "\n")
    return path


def queued_run(client, slug: str, token: str, body: dict) -> str:  # type: ignore[no-untyped-def]
    """Post plan `body` and start it; the run's slug (queued until a runner of its pool claims it)."""
    r = client.post(f"/api/v1/projects/{slug}/plans", json=body, headers=auth(token))
    assert r.status_code == 201, r.text
    return start(client, slug, token, body["name"])


def ab_run(client, make_project, scratch):  # type: ignore[no-untyped-def]
    """A JMeter run of a baseline and an agent 20% slower, on a new public project: (slug, token, run)."""
    from tests.support.jtl import write_jtl

    slug, token = make_project()
    files = [("baseline", write_jtl(scratch / "b.jtl", seed=5, per_group=200)),
             ("agent", write_jtl(scratch / "a.jtl", seed=6, per_group=200, slowdown=1.2))]
    r = upload(client, slug, token, files, {"agent_version": "2.0.0"})
    assert r.status_code == 202, r.text
    return slug, token, wait_analysed(client, r.json()["run"])

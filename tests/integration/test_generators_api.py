"""The share protocol of a run over several generators, through the real app and PostgreSQL (no
runner: the test plays two runners): a share is claimed once, never two by one runner, the start
instant is set when the last share is claimed, and a failed share fails the run, named."""

from __future__ import annotations

from datetime import datetime, timezone

from tests.support.api import auth, new_runner_token, queued_run


def plan(name: str, **extra) -> dict:
    body = {"version": 1, "name": name, "tool": "hey", "pool": "gens-idle", "generators": 2,
            "variants": [{"name": "base", "role": "reference", "target": "http://127.0.0.1:18999"}],
            "scenarios": [{"name": "ok", "path": "/ok"}], "loads": [{"concurrency": 4, "requests": 40}]}
    return {**body, **extra}


def test_shares_are_claimed_once_each_by_its_own_runner_and_start_together(client, make_project):
    slug, admin = make_project(role="admin")
    one, two = new_runner_token("gens-one"), new_runner_token("gens-two")
    run = queued_run(client, slug, admin, plan("two-shares"))
    detail = client.get(f"/api/v1/runs/{run}").json()
    assert detail["meta"]["generators"] == 2
    assert [(s["index"], s["status"], s["runner"]) for s in detail["shares"]] == [(0, "queued", None), (1, "queued", None)]

    r = client.post(f"/api/v1/runs/{run}/claim?runner=r1", json={}, headers=auth(one))
    assert r.status_code == 422 and "split into 2 shares" in r.json()["detail"]
    r = client.post(f"/api/v1/runs/{run}/claim?runner=r1&host=h1&share=0", json={}, headers=auth(one))
    assert r.status_code == 200, r.text
    assert (r.json()["generators"], r.json()["share"], r.json()["start_at"]) == (2, 0, None)
    assert client.get(f"/api/v1/runs/{run}").json()["status"] == "running"
    # a share is claimed once; one runner never takes two shares of a run
    r = client.post(f"/api/v1/runs/{run}/claim?runner=r2&share=0", json={}, headers=auth(two))
    assert r.status_code == 409 and "never twice" in r.json()["detail"]
    r = client.post(f"/api/v1/runs/{run}/claim?runner=r1&share=1", json={}, headers=auth(one))
    assert r.status_code == 409 and r.json()["code"] == "same_runner"
    # only the share's own runner reports on it
    r = client.post(f"/api/v1/runs/{run}/progress?share=1", json={"percent": 1}, headers=auth(one))
    assert r.status_code == 403
    r = client.post(f"/api/v1/runs/{run}/progress?share=0", json={"percent": 1}, headers=auth(two))
    assert r.status_code == 403
    r = client.post(f"/api/v1/runs/{run}/progress?share=0", json={"percent": 1}, headers=auth(one))
    assert r.json() == {"cancel_requested": False, "start_at": None, "step_start_at": None}  # share 2 unclaimed

    before = datetime.now(timezone.utc)
    r = client.post(f"/api/v1/runs/{run}/claim?runner=r2&host=h2&share=1", json={}, headers=auth(two))
    assert r.status_code == 200, r.text
    start_at = datetime.fromisoformat(r.json()["start_at"])
    assert 2.5 <= (start_at - before).total_seconds() <= 3.5 + 5     # 3 s ahead (slack for a slow request)
    r = client.post(f"/api/v1/runs/{run}/progress?share=0", json={"percent": 10, "log": ["go"]}, headers=auth(one))
    assert datetime.fromisoformat(r.json()["start_at"]) == start_at   # one instant for every share
    shares = client.get(f"/api/v1/runs/{run}").json()["shares"]
    assert [(s["runner"], s["host"], s["status"]) for s in shares] == [("r1", "h1", "running"), ("r2", "h2", "running")]

    # every later step starts together too: its instant is set once both shares are ready for it
    def ready(token: str, share: int, step: int):
        r = client.post(f"/api/v1/runs/{run}/progress?share={share}", json={"ready_step": step}, headers=auth(token))
        assert r.status_code == 200, r.text
        return r.json()["step_start_at"]

    assert ready(one, 0, 1) is None
    before = datetime.now(timezone.utc)
    step_1 = datetime.fromisoformat(ready(two, 1, 1))
    assert 1.5 <= (step_1 - before).total_seconds() <= 2.5 + 5
    assert datetime.fromisoformat(ready(one, 0, 1)) == step_1
    assert ready(one, 0, 2) is None                              # step 2 waits for share 2 again

    # a share that fails fails the whole run, named; the other share is told to stop
    r = client.post(f"/api/v1/runs/{run}/finish?share=1", json={"status": "failed", "reason": "load tool failed: boom"},
                    headers=auth(two))
    assert r.status_code == 200 and r.json()["status"] == "failed"
    detail = client.get(f"/api/v1/runs/{run}").json()
    assert detail["status_detail"]["reason"] == \
        "share 2 of 2 (runner 'r2' on host 'h2') failed: load tool failed: boom"
    assert [s["status"] for s in detail["shares"]] == ["cancelled", "failed"]
    r = client.post(f"/api/v1/runs/{run}/progress?share=0", json={"percent": 20}, headers=auth(one))
    assert r.json()["cancel_requested"] is True


def test_a_run_of_one_generator_has_no_shares(client, make_project):
    slug, admin = make_project(role="admin")
    run = queued_run(client, slug, admin, plan("one-gen", generators=1))
    assert client.get(f"/api/v1/runs/{run}").json()["shares"] == []
    r = client.post(f"/api/v1/runs/{run}/claim?share=0", json={}, headers=auth(new_runner_token("gens-solo")))
    assert r.status_code == 422 and "no shares" in r.json()["detail"]


def test_a_load_too_small_to_split_is_refused_naming_the_field(client, make_project):
    slug, admin = make_project(role="admin")
    body = plan("too-few", generators=3, loads=[{"concurrency": 2, "requests": 40}])
    r = client.post(f"/api/v1/projects/{slug}/plans", headers=auth(admin), json=body)
    assert r.status_code == 422
    assert "loads[0].concurrency: 2 cannot be split over 3 generators" in r.json()["detail"]


def test_concurrent_reports_of_two_shares_lose_no_log_line(live_api, client, make_project):
    """Both shares report at once (as their runners' heartbeats do): every line either sent is in the run's
    log. The report reads the run's progress under its row lock; a progress read before the lock would
    write back a stale log and drop the other share's lines (seen: one of two "starting" lines lost)."""
    import httpx
    from concurrent.futures import ThreadPoolExecutor

    slug, admin = make_project(role="admin")
    tokens = new_runner_token("gens-race-one"), new_runner_token("gens-race-two")
    run = queued_run(client, slug, admin, plan("race-shares"))
    for share, token in enumerate(tokens):
        r = client.post(f"/api/v1/runs/{run}/claim?runner=race{share}&share={share}", json={}, headers=auth(token))
        assert r.status_code == 200, r.text

    def report(share: int) -> list[int]:
        with httpx.Client(base_url=live_api, headers=auth(tokens[share]), timeout=60) as http:
            return [http.post(f"/api/v1/runs/{run}/progress?share={share}",
                              json={"percent": i, "log": [f"line {i}"]}).status_code for i in range(40)]

    with ThreadPoolExecutor(2) as pool:
        statuses = list(pool.map(report, [0, 1]))
    assert statuses == [[200] * 40] * 2
    log = client.get(f"/api/v1/runs/{run}").json()["progress"]["log"]
    assert sorted(line for line in log if "] line " in line) == \
        sorted(f"[share {share + 1}] line {i}" for share in (0, 1) for i in range(40))

"""Ingest's validity checks on uploads through the API and a real worker: the reason is in the run's
validity rows, a stall makes the run invalid, a warning does not."""

from __future__ import annotations

from tests.support.api import upload, wait_run
from tests.support.validity_jtl import plateau_jtl, stalled_jtl


def test_a_stall_injected_into_a_run_marks_it_invalid_with_the_reason(client, worker, make_project, scratch):
    slug, token = make_project()
    baseline = stalled_jtl(scratch / "baseline.jtl", gap=None)
    agent = stalled_jtl(scratch / "agent.jtl", gap=(8_000, 12_000))
    r = upload(client, slug, token, [("baseline", baseline), ("agent", agent)], {"agent_version": "1.0.0"})
    assert r.status_code == 202, r.text
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    assert run["is_valid"] is False
    stalls = [v for v in run["validity"] if v["check"] == "stall"]
    assert len(stalls) == 1, run["validity"]
    [row] = stalls
    assert row["variant"] == "agent" and row["ok"] is False and row["severity"] == "error"
    assert row["source"] == "ingest" and row["load"] == "10 threads"
    assert "for 4 s (seconds 8–12 of the load)" in row["detail"]


def test_a_40_ms_plateau_is_a_warning_and_the_run_stays_valid(client, worker, make_project, scratch):
    slug, token = make_project()
    r = upload(client, slug, token, [("baseline", plateau_jtl(scratch / "plateau.jtl"))])
    assert r.status_code == 202, r.text
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    assert run["is_valid"] is True
    [row] = [v for v in run["validity"] if v["check"] == "delayed ACK"]
    assert row["severity"] == "warning" and row["ok"] is False
    assert "delayed-ACK / Nagle signature" in row["detail"]
    # 1000 samples: the project's default latency_p99 needs ceil(10 / 0.01) = 1000, p75 needs 40
    assert not [v for v in run["validity"] if v["check"].startswith("samples for")]


def test_too_few_samples_for_the_requested_percentile(client, worker, make_project, scratch):
    slug, token = make_project()
    r = upload(client, slug, token, [("baseline", plateau_jtl(scratch / "small.jtl", n=500))])
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    [row] = [v for v in run["validity"] if v["check"] == "samples for latency_p99"]
    assert row["severity"] == "warning" and "needs at least 1,000 samples" in row["detail"]
    assert "with 500" in row["detail"] and run["is_valid"] is True


def test_an_invalid_run_never_raises_an_alert(client, worker, make_project, scratch):
    """A trail steps up by half at version 8, and version 8's run stalled (invalid): the alert names the
    first valid run of the new level, 9, never the invalid one. Without the stall, the same trail alerts
    at 8 (the control: the step alone is found where it is)."""
    import numpy as np

    from tests.support.api import wait_analysed
    from tests.support.validity_jtl import T0, write_rows

    def run_file(path, level_ms: float, seed: int, stalled: bool):
        rng = np.random.default_rng(seed)
        starts = [T0 + 300 + 5 * i for i in range(4000)]
        if stalled:
            starts = [t for t in starts if not (T0 + 8_000 <= t < T0 + 12_000)]
        return write_rows(path, starts, np.maximum(1, np.round(level_ms * rng.lognormal(0, 0.2, len(starts)))))

    def trail(stalled_at: int | None) -> tuple[list[dict], list[tuple[str, str]]]:
        slug, token = make_project()
        runs = []
        for i in range(13):
            path = run_file(scratch / f"{slug}-{i}.jtl", 40.0 if i < 8 else 60.0, seed=i, stalled=i == stalled_at)
            r = upload(client, slug, token, [("agent", path)], {"agent_version": f"1.{i}.0"})
            assert r.status_code == 202, r.text
            runs.append(wait_analysed(client, r.json()["run"]))
        alerts = client.get(f"/api/v1/projects/{slug}/alerts").json()["items"]
        return runs, sorted({(a["run"], a["direction"]) for a in alerts if a["metric"] == "latency_p75"})

    runs, alerted = trail(stalled_at=8)
    assert runs[8]["is_valid"] is False and all(r["is_valid"] for i, r in enumerate(runs) if i != 8)
    assert alerted == [(runs[9]["slug"], "regression")]

    runs, alerted = trail(stalled_at=None)
    assert alerted == [(runs[8]["slug"], "regression")]


def test_a_percentile_of_a_few_recording_steps_is_a_warning_and_the_run_stays_valid(client, worker, make_project,
                                                                                    scratch):
    """hey writes latency in 0.1 ms steps: P75s of 0.3–0.4 ms are 3–4 steps (jumps of 25–33%), which the run
    says; JMeter's whole ms on a 40 ms service are 40 steps, which it does not."""
    import numpy as np

    from tests.support.api import hey_csv as _hey_csv

    slug, token = make_project()
    rng = np.random.default_rng(31)
    fast = rng.choice([0.0002, 0.0003, 0.0004, 0.0005, 0.0009], size=2000, p=[0.2, 0.5, 0.2, 0.08, 0.02])
    hey = _hey_csv(scratch / "hey.csv", list(np.arange(2000) * 0.0005), list(fast))
    r = upload(client, slug, token, [("baseline", hey)])
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    p75 = float(np.percentile(fast * 1000, 75, method="inverted_cdf"))
    [row] = [v for v in run["validity"] if v["check"] == "resolution of latency_p75"]
    assert row["severity"] == "warning" and row["ok"] is False and run["is_valid"] is True
    assert "steps of 0.1 ms" in row["detail"] and f"at {p75:g} ms ({p75 / 0.1:.0f} steps)" in row["detail"]

    r = upload(client, slug, token, [("baseline", plateau_jtl(scratch / "plateau.jtl"))])
    run = wait_run(client, r.json()["run"])
    assert run["status"] == "completed", run["status_detail"]
    assert not [v for v in run["validity"] if v["check"].startswith("resolution of")], run["validity"]

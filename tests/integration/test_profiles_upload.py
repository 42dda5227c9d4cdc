"""Profiles uploaded with a run (the files a runner sends, or a CI job): stored per repetition, normalised per
1,000 requests, the differential profile's rows and intervals against scipy, across runs (`base`, 'previous'),
a JFR recording kept and downloadable next to the stacks read from it, and bad profile files refused."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from infra.localstack import VENV_BIN, wait_until

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"
LOAD = {"kind": "concurrency", "value": 2}
REQUESTS = (1000, 1250, 800)


def _upload(client, slug, token, files: list[tuple[dict, str, bytes]], **meta):
    body = {"files": [spec for spec, _, _ in files], "reference": "baseline", **meta}
    return client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                       data={"metadata": json.dumps(body)}, files=[("files", (name, data)) for _, name, data in files])


def _collapsed(variant: str, rep: int, span_samples: int) -> tuple[dict, str, bytes]:
    text = "java/lang/Thread.run;app/Work.run 10\njava/lang/Thread.run;app/Work.parse 5\n"
    if span_samples:
        text += f"java/lang/Thread.run;app/Work.run;io/opentelemetry/sdk/trace/SdkSpan.end {span_samples}\n"
    spec = {"variant": variant, "format": "collapsed", "load": LOAD,
            "profile": {"runtime": "jvm", "repetition": rep, "step": 2 * rep + (variant == "agent"),
                        "requests": REQUESTS[rep - 1], "period_ms": 10}}
    return spec, f"{variant}-{rep}.collapsed.txt", text.encode()


def _run(client, slug, token, spans: tuple[int, int, int], **meta) -> dict:
    files = [f for rep in (1, 2, 3) for f in (_collapsed("baseline", rep, 0), _collapsed("agent", rep, spans[rep - 1]))]
    r = _upload(client, slug, token, files, **meta)
    assert r.status_code == 202, r.text
    run = wait_until(lambda: (x := client.get(f"/api/v1/runs/{r.json()['run']}").json())["status"] in (
        "completed", "failed") and x, 60, "the upload's ingest")
    assert run["status"] == "completed", run["status_detail"]
    return run


def test_uploaded_profiles_give_the_differential_profile_with_intervals(client, worker, make_project):
    slug, token = make_project()
    spans = (4, 6, 5)
    run = _run(client, slug, token, spans, agent_version="1.0")
    profiles = client.get(f"/api/v1/runs/{run['slug']}/profiles").json()["items"]
    assert len(profiles) == 6 and {p["source"] for p in profiles} == {"async-profiler"}
    for p in profiles:
        expected = (150.0 + (10.0 * spans[p["repetition"] - 1] if p["variant"] == "agent" else 0.0))
        assert p["cpu_ms"] == pytest.approx(expected)
        assert p["cpu_ms_per_1k"] == pytest.approx(expected * 1000 / REQUESTS[p["repetition"] - 1])
    # Per 1,000 requests, per repetition, computed here: the agent's span work and the whole difference.
    span_1k = np.array([10.0 * s * 1000 / n for s, n in zip(spans, REQUESTS)])
    diff = client.get(f"/api/v1/runs/{run['slug']}/profiles/diff").json()
    assert (diff["variant"], diff["reference"], diff["base"]) == ("agent", "baseline", run["slug"])
    base_1k = np.array([150.0 * 1000 / n for n in REQUESTS])
    ci = sps.ttest_ind(base_1k + span_1k, base_1k).confidence_interval()   # 3 + 3 repetitions: unpaired
    assert diff["whole"]["method"] == "t-repetitions"
    assert diff["whole"]["abs_diff"] == pytest.approx(span_1k.mean())
    assert (diff["whole"]["ci_low"], diff["whole"]["ci_high"]) == pytest.approx((ci.low, ci.high))
    top = diff["packages"][0]
    assert (top["name"], top["agent"]) == ("io.opentelemetry.sdk", True)
    assert top["attributed"]["abs_diff"] == pytest.approx(span_1k.mean())
    ci = sps.ttest_ind(span_1k, np.zeros(3)).confidence_interval()
    assert (top["attributed"]["ci_low"], top["attributed"]["ci_high"]) == pytest.approx((ci.low, ci.high))
    frames = {f["name"]: f for f in diff["frames"]}
    assert frames["io.opentelemetry.sdk.trace.SdkSpan.end"]["self"]["abs_diff"] == pytest.approx(span_1k.mean())
    assert frames["app.Work.run"]["total"]["abs_diff"] == pytest.approx(span_1k.mean())
    assert frames["app.Work.run"]["self"]["abs_diff"] == pytest.approx(0.0, abs=1e-9)
    assert diff["consistency"]["sampled"] is None    # no resources were sampled
    flame = client.get(f"/api/v1/runs/{run['slug']}/profiles/flame", params={"variant": "baseline"}).json()
    assert flame["total"] == pytest.approx(np.mean([150.0 * 1000 / n for n in REQUESTS]))

    # A later run of the agent, compared with this one: explicitly, and as its change point's previous run.
    later = _run(client, slug, token, (9, 11, 10), agent_version="1.1")
    for base in (run["slug"], "previous"):
        across = client.get(f"/api/v1/runs/{later['slug']}/profiles/diff", params={"base": base}).json()
        assert (across["base"], across["variant"], across["reference"]) == (run["slug"], "agent", "agent")
        grew = np.array([10.0 * s * 1000 / n for s, n in zip((9, 11, 10), REQUESTS)]) - span_1k
        assert across["whole"]["abs_diff"] == pytest.approx(grew.mean())
        assert across["consistency"] is None
    r = client.get(f"/api/v1/runs/{run['slug']}/profiles/diff", params={"base": "previous"})
    assert r.status_code == 404 and "no run before" in r.json()["detail"]


def test_a_jfr_recording_is_kept_next_to_its_stacks(client, worker, make_project, tmp_path):
    from benchtrail_runner.profiling import read_jfr

    slug, token = make_project()
    raw = (FIXTURES / "java-demo-agent.jfr").read_bytes()
    doc = read_jfr(FIXTURES / "java-demo-agent.jfr", tmp_path / "stacks.json").read_bytes()
    profile = {"runtime": "jvm", "repetition": 1, "step": 0, "requests": 500}
    files = [({"variant": "agent", "format": "jfr", "load": LOAD, "profile": profile}, "agent.jfr", raw),
             ({"variant": "agent", "format": "benchtrail-profile", "load": LOAD,
               "profile": {**profile, "raw_file": 0}}, "agent.stacks.json", doc)]
    r = _upload(client, slug, token, files, reference=None)
    assert r.status_code == 202, r.text
    run = wait_until(lambda: (x := client.get(f"/api/v1/runs/{r.json()['run']}").json())["status"] in (
        "completed", "failed") and x, 60, "the upload's ingest")
    assert run["status"] == "completed", run["status_detail"]
    [p] = client.get(f"/api/v1/runs/{run['slug']}/profiles").json()["items"]
    assert p["source"] == "jfr" and p["samples"] > 0 and p["cpu_ms"] == pytest.approx(10.0 * p["samples"])
    [kept] = p["raw_files"]
    assert (kept["format"], kept["filename"]) == ("jfr", "agent.jfr")
    download = client.get("/" + kept["download_url"].split("/", 3)[3])
    assert download.status_code == 200 and download.content == raw

    # Measured again from its stored files (`benchtrail admin reingest`): the same profile, read again.
    done = subprocess.run([str(VENV_BIN / "benchtrail"), "admin", "reingest", "--json", run["slug"]],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    [again] = client.get(f"/api/v1/runs/{run['slug']}/profiles").json()["items"]
    assert (again["samples"], again["cpu_ms"], again["raw_files"]) == (p["samples"], p["cpu_ms"], p["raw_files"])
    assert again["id"] != p["id"]


@pytest.mark.parametrize("spec, name, data, status, words", [
    ({"variant": "a", "format": "collapsed", "profile": {"runtime": "jvm"}}, "c.txt", b"a;b 1\n", 422,
     "profile.period_ms"),
    ({"variant": "a", "format": "pprof"}, "p.pb.gz", b"x", 422, "describe it in `profile`"),
    ({"variant": "a", "format": "pprof", "profile": {"runtime": "go"}}, "p.pb", b"\x0a\x04\x08\x01\x10\x02", 400,
     "string_table"),
    ({"variant": "a", "format": "collapsed", "profile": {"runtime": "jvm", "period_ms": 10}}, "c.txt",
     b"a;b 1\nno count here\n", 400, "line 2"),
    ({"variant": "a", "format": "jfr", "profile": {"runtime": "jvm"}}, "x.jfr", b"not a recording", 400, "FLR"),
])
def test_bad_profile_files_are_refused_with_the_reason(client, make_project, spec, name, data, status, words):
    slug, token = make_project()
    r = _upload(client, slug, token, [(spec, name, data)], reference=None)
    assert r.status_code == status, r.text
    assert words in r.text
    assert client.get(f"/api/v1/projects/{slug}/runs").json()["items"] == []

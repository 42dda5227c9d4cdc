"""A synthetic agent-version series with known steps, uploaded through the API: alerts exactly at
the steps, one signed webhook delivery per alert (generic and Slack bodies, a retry after a 503),
and the CLI gate (`benchtrail upload --wait --fail-on-alert`) failing on the upload that reveals a step."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from infra.localstack import VENV_BIN, Process, answers, free_port, wait_until
from tests.support.api import wait_analysed
from tests.support.jmh import jmh

VERSIONS = [f"1.{i}.0" for i in range(12)]
STEPS = (4, 8)


def series(seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Reference ~2 ms with 0.3% noise; the agent adds 5%, then 15% from 1.4.0, 25% from 1.8.0."""
    rng = np.random.default_rng(seed)
    ref = 2.0 * (1 + rng.normal(0, 0.003, len(VERSIONS)))
    added = np.array([5.0 + 10.0 * sum(i >= s for s in STEPS) for i in range(len(VERSIONS))])
    agent = ref * (1 + (added + rng.normal(0, 0.3, len(VERSIONS))) / 100)
    return np.round(ref, 4), np.round(agent, 4)


def metadata(version: str) -> dict:
    return {"files": [{"variant": "baseline", "format": "jmh-text"}, {"variant": "agent", "format": "jmh-text"}],
            "agent_version": version, "reference": "baseline", "environment": {"cpus": 2, "os": "Linux"}}


@pytest.fixture(scope="module")
def api_server(infra, worker, logdir):
    port = free_port()
    env = {**os.environ, **{k: v for k, v in infra.items() if not k.startswith("_")}}
    proc = Process("api-webhooks", [str(VENV_BIN / "uvicorn"), "benchtrail.app:create_app", "--factory",
                                    "--host", "127.0.0.1", "--port", str(port)], env, logdir)
    url = f"http://127.0.0.1:{port}"
    wait_until(lambda: answers(f"{url}/api/health"), 30, "the API to answer")
    yield url
    proc.stop()


def cli_upload(url: str, token: str, slug: str, version: str, scratch: Path, ref: float, agent: float):
    (scratch / "baseline.txt").write_bytes(jmh(ref))
    (scratch / "agent.txt").write_bytes(jmh(agent))
    argv = [str(VENV_BIN / "benchtrail"), "upload", "--project", slug, "--url", url, "--token", token,
            "--variant", f"baseline={scratch / 'baseline.txt'};format=jmh-text",
            "--variant", f"agent={scratch / 'agent.txt'};format=jmh-text",
            "--reference", "baseline", "--agent-version", version, "--cpus", "2", "--os", "Linux",
            "--wait", "--wait-timeout", "60", "--fail-on-alert", "--json"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_steps_raise_alerts_there_only_with_one_signed_delivery_each(client, worker, make_project, admin_token,
                                                                     receiver, api_server, scratch):
    slug, token = make_project()
    admin = {"Authorization": f"Bearer {admin_token}"}
    assert client.patch(f"/api/v1/projects/{slug}/settings", json={"metrics": ["score"]},
                        headers=admin).status_code == 200
    # Destinations outside the allow-list and non-admin tokens are refused.
    r = client.post(f"/api/v1/projects/{slug}/webhooks", json={"url": "http://10.1.2.3/hook"}, headers=admin)
    assert r.status_code == 422 and "allow-list" in r.json()["detail"]
    r = client.post(f"/api/v1/projects/{slug}/webhooks", json={"url": f"{receiver.url}/generic"},
                    headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 403
    hooks = {}
    for style in ("generic", "slack"):
        r = client.post(f"/api/v1/projects/{slug}/webhooks", json={"url": f"{receiver.url}/{style}", "style": style},
                        headers=admin)
        assert r.status_code == 201, r.text
        hooks[style] = r.json()

    ref, agent = series()
    slugs = []
    for i, version in enumerate(VERSIONS):
        if i in (6, 7):  # through the CLI: 1.6.0 completes three points after the step at 1.4.0
            done = cli_upload(api_server, token, slug, version, scratch, ref[i], agent[i])
            assert done.returncode == (5 if i == 6 else 0), (done.returncode, done.stdout, done.stderr)
            out = json.loads(done.stdout)
            slugs.append(out["run"])
            if i == 6:
                assert len(out["alerts"]) == 2 and all(a["run"] == slugs[4] for a in out["alerts"])
                assert all(a["permalink"].endswith(f"/p/{slug}/alerts/{a['id']}") for a in out["alerts"])
                assert "alert: regression" in done.stderr
            else:
                assert out["alerts"] == []
            continue
        meta = metadata(version)
        r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                        data={"metadata": json.dumps(meta)},
                        files=[("files", ("baseline.txt", jmh(ref[i]))), ("files", ("agent.txt", jmh(agent[i])))])
        assert r.status_code == 202, r.text
        slugs.append(wait_analysed(client, r.json()["run"])["slug"])

    alerts = client.get(f"/api/v1/projects/{slug}/alerts").json()
    found = sorted((a["run"], a["kind"], a["trail"]["variant"]) for a in alerts["items"])
    expected = sorted((slugs[s], kind, "agent") for s in STEPS for kind in ("overhead", "trail"))
    assert found == expected
    # Grouped by the run whose analysis raised them: 1.6.0 and 1.10.0.
    assert sorted(g["run"] for g in alerts["groups"]) == sorted([slugs[6], slugs[10]])

    # Magnitudes against numpy over what was known when the alert was raised: from the previous step
    # (or the start) to the detecting run; p-values against scipy's Welch test.
    added = 100 * (agent - ref) / ref
    for a in alerts["items"]:
        values = added if a["kind"] == "overhead" else agent
        s, d = slugs.index(a["run"]), slugs.index(a["detected_by"])
        assert d == s + 2  # three points of the new level are enough
        lo = max([b for b in STEPS if b < s], default=0)
        before, after = values[lo:s], values[s:d + 1]
        assert a["direction"] == "regression"
        assert a["magnitude_abs"] == pytest.approx(after.mean() - before.mean(), rel=1e-9)
        assert a["p_value"] == pytest.approx(stats.ttest_ind(before, after, equal_var=False).pvalue, rel=1e-6)

    # One delivery per alert and webhook, signed with the webhook's secret.
    ids = {a["id"] for a in alerts["items"]}
    wait_until(lambda: len(receiver.at("/generic")) == 4 and len(receiver.at("/slack")) == 5, 30,
               "webhook deliveries (slack: one 503, then retried)")
    for style in ("generic", "slack"):
        for headers, body in receiver.at(f"/{style}"):
            expected_sig = "sha256=" + hmac.new(hooks[style]["secret"].encode(), body, hashlib.sha256).hexdigest()
            assert headers["X-Benchtrail-Signature"] == expected_sig
    generic = [json.loads(b) for _, b in receiver.at("/generic")]
    assert sorted(p["id"] for p in generic) == sorted(ids)
    assert all(p["project"] == slug and p["direction"] == "regression" for p in generic)
    slack = [json.loads(b) for _, b in receiver.at("/slack")]
    assert all(p["text"].startswith("<http://testserver/p/") for p in slack)
    assert len({b for _, b in receiver.at("/slack")}) == 4  # the 503'd body was sent again, byte for byte

    log = wait_until(lambda: (d := client.get(f"/api/v1/webhooks/{hooks['slack']['id']}/deliveries",
                                              headers=admin).json()["items"])
                     and all(x["status"] == "delivered" for x in d) and d, 10, "delivery log")
    assert sorted(d["attempts"] for d in log) == [1, 1, 1, 2]
    assert all(d["response_code"] == 200 for d in log)
    assert client.get(f"/api/v1/webhooks/{hooks['slack']['id']}/deliveries").status_code == 401

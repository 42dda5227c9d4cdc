"""JMH text results in tests: one-line synthetic tables with a chosen score, and the six real X-Ray agent
versions of `examples/data` (read here with plain Python, independently of our parsers)."""

from __future__ import annotations

import json

from infra.localstack import REPO
from tests.support.api import auth, wait_analysed

SCENARIO = "Synthetic.request"

XRAY_DATA = REPO / "examples" / "data" / "aws-xray-java-agent"
XRAY_VERSIONS = ["2.7.x", "2.8.x", "2.9.x", "2.18.x", "2.21.0", "2.21.x"]
XRAY_VARIANTS = ["no-instrumentation", "sdk-instrumentation", "auto-instrumentation"]
XRAY_ENV = {"instance_type": "m5.xlarge", "cpus": 4, "memory_mb": 16384, "os": "Amazon Linux 2"}


def jmh(score: float) -> bytes:
    """A JMH text table of one sample-mode benchmark, SCENARIO, scoring `score` ms/op."""
    return ("Benchmark          Mode   Cnt   Score    Error  Units\n"
            f"{SCENARIO}  sample  2000  {score:.4f} ± 0.0020  ms/op\n").encode()


def upload_score(client, slug: str, headers: dict[str, str], version: str, score: float) -> dict:  # type: ignore[no-untyped-def]
    """One run of one variant ("agent") scoring `score` ms/op at `version`, once analysed."""
    meta = {"files": [{"variant": "agent", "format": "jmh-text"}], "agent_version": version,
            "environment": {"cpus": 2}}
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=headers, data={"metadata": json.dumps(meta)},
                    files=[("files", ("agent.txt", jmh(round(score, 4))))])
    assert r.status_code == 202, r.text
    return wait_analysed(client, r.json()["run"])


def upload_scores(client, slug, token, version, ref, agent, **extra):  # type: ignore[no-untyped-def]
    """One run of a baseline scoring `ref` and an agent scoring `agent`, once analysed."""
    meta = {"files": [{"variant": "baseline", "format": "jmh-text"}, {"variant": "agent", "format": "jmh-text"}],
            "agent_version": version, "reference": "baseline", "environment": {"cpus": 2}, **extra}
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth(token), data={"metadata": json.dumps(meta)},
                    files=[("files", ("baseline.txt", jmh(ref))), ("files", ("agent.txt", jmh(agent)))])
    assert r.status_code == 202, r.text
    return wait_analysed(client, r.json()["run"])


def jmh_rows(text: str) -> dict[tuple[str, str], tuple[float, float, int]]:
    """(benchmark, mode) -> (score, error, cnt) of the rows with '±'."""
    out = {}
    for line in text.splitlines():
        t = line.split()
        if "±" in t and ":" not in t[0]:
            i = t.index("±")
            out[(t[0], t[1])] = (float(t[i - 1]), float(t[i + 1]), int(t[2]))
    return out


def scaled(text: str, bench: str, factor: float) -> str:
    """The file with every sample-mode number of `bench` (score, error, percentiles) times `factor`."""
    lines = []
    for line in text.splitlines():
        t = line.split()
        if t and t[0].startswith(bench) and "sample" in t:
            nums = [(i, tok) for i, tok in enumerate(t) if _is_float(tok) and i > t.index("sample") + (
                1 if ":" not in t[0] else 0)]
            for i, tok in nums:
                t[i] = f"{float(tok) * factor:.3f}"
            line = "  ".join(t)
        lines.append(line)
    return "\n".join(lines) + "\n"


def _is_float(tok: str) -> bool:
    try:
        float(tok)
        return "." in tok
    except ValueError:
        return False


def original(version: str, variant: str) -> str:
    return (XRAY_DATA / f"aws-xray-java-agent_{version}_{variant}.txt").read_text()


def upload_version(client, slug, token, version, texts: dict[str, str]):  # type: ignore[no-untyped-def]
    """One X-Ray version's three variants (`texts`: variant -> JMH text); the run's slug."""
    meta = {"files": [{"variant": v, "format": "jmh-text"} for v in XRAY_VARIANTS], "agent_version": version,
            "reference": "no-instrumentation", "environment": XRAY_ENV}
    files = [("files", (f"{v}.txt", texts[v].encode())) for v in XRAY_VARIANTS]
    r = client.post(f"/api/v1/projects/{slug}/runs", headers=auth(token),
                    data={"metadata": json.dumps(meta)}, files=files)
    assert r.status_code == 202, r.text
    return r.json()["run"]


def set_settings(client, admin_token, slug, body):  # type: ignore[no-untyped-def]
    r = client.patch(f"/api/v1/projects/{slug}/settings", json=body, headers=auth(admin_token))
    assert r.status_code == 200, r.text

"""The Easegress report's shape from real hey output: 3 variants × 3 cases × 3 concurrencies, nine hey
summaries per variant, uploaded with their scenario and load; the matrix equals what hey printed."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.support.api import wait_run
from tests.support.env import TOOLS

CASES = {"static": "/static/0cc175b9c0f1b6a831c399e269772661", "prefix": "/users/alice/42", "ok": "/ok"}
LOADS = ((2, 200), (4, 400), (6, 600))  # (concurrency, requests)


def hey_summary(text: str) -> dict[str, float]:
    """Independent reading of hey's summary: Requests/sec and the 50/75/90/99 % lines (seconds)."""
    out = {"throughput": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))}
    for pct in (50, 75, 90, 99):
        out[f"p{pct}"] = float(re.search(rf"\s{pct}% in ([\d.]+) secs", text).group(1)) * 1000
    out["count"] = sum(int(n) for n in re.findall(r"\[\d+\]\s+(\d+) responses", text))
    return out


def test_hey_matrix_of_three_variants(client, worker, make_project, scratch, go_target):
    slug, token = make_project()
    hey = str(TOOLS / "bin" / "hey")
    files, meta_files, expected = [], [], {}
    for variant in ("ordered-v1", "ordered-v2", "radixtree"):
        for case, path in CASES.items():
            for conc, n in LOADS:
                out = scratch / f"{variant}-{case}-c{conc}.txt"
                text = subprocess.run([hey, "-n", str(n), "-c", str(conc), f"{go_target}{path}"],
                                      capture_output=True, text=True, check=True).stdout
                out.write_text(text)
                files.append(out)
                meta_files.append({"variant": variant, "scenario": case,
                                   "load": {"kind": "concurrency", "value": conc, "requests": n}})
                expected[(variant, case, conc)] = hey_summary(text)
    r = client.post(f"/api/v1/projects/{slug}/runs", headers={"Authorization": f"Bearer {token}"},
                    data={"metadata": json.dumps({"files": meta_files, "reference": "ordered-v1"})},
                    files=[("files", (p.name, p.read_bytes())) for p in files])
    assert r.status_code == 202, r.text
    run_slug = r.json()["run"]
    run = wait_run(client, run_slug)
    assert run["status"] == "completed", run["status_detail"]
    assert run["tool"] == "hey"
    variants = {v["id"]: v for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l for l in run["loads"]}
    assert [v["name"] for v in run["variants"]] == ["ordered-v1", "ordered-v2", "radixtree"]
    assert [v["is_reference"] for v in run["variants"]] == [True, False, False]
    assert sorted((l["value"], l["requests"]) for l in run["loads"]) == [(2, 200), (4, 400), (6, 600)]
    cells = {(variants[c["variant_id"]]["name"], scenarios[c["scenario_id"]], int(loads[c["load_id"]]["value"])): c
             for c in run["cells"]}
    assert set(cells) == set(expected)
    for key, exp in expected.items():
        cell = cells[key]
        assert cell["count"] == exp["count"] == LOADS[[l[0] for l in LOADS].index(key[2])][1]
        assert cell["throughput"] == pytest.approx(exp["throughput"], rel=1e-9)
        for pct in (50, 75, 90, 99):
            assert cell[f"latency_p{pct}"] == pytest.approx(exp[f"p{pct}"], rel=1e-9)

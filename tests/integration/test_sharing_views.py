"""Images and frozen snapshots of the compare and history views, and the run page's percentile
spectrum: each image loads from its URL alone (no dashboard), is a valid SVG/PNG, and the numbers
written on it equal the ones computed here from the raw files (plain Python and numpy). A frozen
compare or history view keeps its numbers after the analysis settings change and the runs are
analysed again. Private projects answer 404 without a token, as their JSON endpoints do."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from matplotlib import image as mpimg

from benchtrail.db_boundary import unit_of_work
from benchtrail.jobs import enqueue
from infra.localstack import wait_until
from tests.support.api import ab_run
from tests.support.jmh import XRAY_VARIANTS as VARIANTS
from tests.support.jmh import XRAY_VERSIONS as VERSIONS
from tests.support.jmh import jmh_rows, original, scaled, set_settings, upload_version
from tests.support.api import wait_analysed
from tests.support.jtl import LABELS, thread_group_size
from tests.support.series import throughput

NUMBER = r"[+-]?[\d,]+(?:\.\d+)?"
SERVLET = ("ServletBenchmark.serviceRequest", "sample")
SVG_NS = "{http://www.w3.org/2000/svg}"


def texts(body: bytes) -> list[str]:
    """Every <text> element of an SVG (matplotlib keeps text as text with svg.fonttype none)."""
    root = ET.fromstring(body)
    assert root.tag == f"{SVG_NS}svg"
    return [" ".join(t.itertext()).strip() for t in root.iter(f"{SVG_NS}text")]


def num(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def assert_png(body: bytes, width: int = 900) -> None:
    assert body[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = mpimg.imread(io.BytesIO(body), format="png")
    assert pixels.shape[1] == width and pixels.shape[2] == 4
    assert pixels[..., :3].std() > 0.05  # something is drawn


def three_digits(expected: float) -> float:
    """The absolute tolerance of a value written with three significant digits (half a unit of the last)."""
    return 0.5 * 10 ** (np.floor(np.log10(abs(expected))) - 2) + 1e-12 if expected else 1e-12


def xray_history(client, make_project, admin_token, public: bool):  # type: ignore[no-untyped-def]
    """Six X-Ray versions, the auto agent 10% slower on servlets from 2.18.x on (an alerted step)."""
    slug, token = make_project(public=public)
    set_settings(client, admin_token, slug, {"metrics": ["score"], "detection": {"min_magnitude_pct": 5}})
    files: dict[str, dict[str, str]] = {}
    slugs = []
    for i, v in enumerate(VERSIONS):
        t = {x: original(v, x) for x in VARIANTS}
        if i >= 3:
            t["auto-instrumentation"] = scaled(t["auto-instrumentation"], "ServletBenchmark", 1.10)
        files[v] = t
        slugs.append(wait_analysed(client, upload_version(client, slug, token, v, t), token=token)["slug"])
    return slug, token, files, slugs


def test_history_and_compare_images_and_frozen_views_of_a_private_project(client, worker, make_project, admin_token):
    slug, token, files, slugs = xray_history(client, make_project, admin_token, public=False)
    auth = {"Authorization": f"Bearer {token}"}
    trail = client.get(f"/api/v1/projects/{slug}/trails", headers=auth, params={
        "scenario": SERVLET[0], "variant": "auto-instrumentation", "mode": "sample"}).json()["items"][0]

    # Private: refused without a token exactly like the JSON read of the same thing.
    for json_url, image_url in (
            (f"/api/v1/trails/{trail['id']}?metric=score", f"/api/v1/trails/{trail['id']}/chart.svg?metric=score"),
            (f"/api/v1/compare?a={slugs[2]}&b={slugs[3]}&metric=score",
             f"/api/v1/compare/chart.png?a={slugs[2]}&b={slugs[3]}&metric=score")):
        anonymous_json, anonymous_image = client.get(json_url), client.get(image_url)
        assert anonymous_json.status_code == anonymous_image.status_code == 404
        assert anonymous_image.json()["error"] == anonymous_json.json()["error"] == "NotFound"

    # The History chart: one point per version, each written "score ±error" as in the JMH files.
    svg = client.get(f"/api/v1/trails/{trail['id']}/chart.svg", params={"metric": "score"}, headers=auth)
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert svg.headers["cache-control"] == "private, no-cache" and svg.headers["etag"]
    words = texts(svg.content)
    written = [(num(m[1]), num(m[2])) for w in words if (m := re.fullmatch(rf"({NUMBER}) ±({NUMBER})", w))]
    expected = [jmh_rows(files[v]["auto-instrumentation"])[SERVLET][:2] for v in VERSIONS]
    assert len(written) == len(VERSIONS)
    for (value, error), (score, err) in zip(written, expected):
        assert value == pytest.approx(score, abs=three_digits(score))
        assert error == pytest.approx(err, abs=three_digits(err))
    assert all(v in words for v in VERSIONS)  # the x axis: agent versions in version order
    alert = [w for w in words if w.startswith("alert #")]
    assert alert and alert[0].endswith("regression"), words  # the injected step at 2.18.x is marked
    assert any("change point" in w for w in words) and any("JMH error" in w for w in words)
    assert client.get(f"/api/v1/trails/{trail['id']}/chart.svg", params={"metric": "score"},
                      headers={**auth, "If-None-Match": svg.headers["etag"]}).status_code == 304

    # Its overhead: percent of no-instrumentation per version, with the interval band.
    over = client.get(f"/api/v1/trails/{trail['id']}/chart.svg", params={"metric": "score", "kind": "overhead"},
                      headers=auth)
    assert over.status_code == 200
    pcts = [num(w[:-1]) for w in texts(over.content) if re.fullmatch(rf"{NUMBER}%", w)]
    refs = [jmh_rows(files[v]["no-instrumentation"])[SERVLET][0] for v in VERSIONS]
    want = [100 * (a - r) / r for (a, _), r in zip(expected, refs)]
    assert len(pcts) == len(want)
    for got, w in zip(pcts, want):
        assert got == pytest.approx(w, abs=three_digits(w))
    assert "95% interval" in texts(over.content)
    png = client.get(f"/api/v1/trails/{trail['id']}/chart.png", params={"metric": "score"}, headers=auth)
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert_png(png.content)
    assert client.get(f"/api/v1/trails/{trail['id']}/chart.svg", params={"metric": "cpu_pct"},
                      headers=auth).status_code == 404  # no value of that metric on a JMH trail
    assert client.get(f"/api/v1/trails/{trail['id']}/chart.gif", headers=auth).status_code == 422

    # The compare chart: 2.9.x → 2.18.x, every variant, benchmark and mode; the change in percent.
    a, b = slugs[2], slugs[3]
    cmp = client.get("/api/v1/compare/chart.svg", params={"a": a, "b": b, "metric": "score"}, headers=auth)
    assert cmp.status_code == 200 and cmp.headers["content-type"] == "image/svg+xml"
    words = texts(cmp.content)
    got_pct = sorted(num(w[:-1]) for w in words if re.fullmatch(rf"{NUMBER}%", w))
    rows_a = {x: jmh_rows(files[VERSIONS[2]][x]) for x in VARIANTS}
    rows_b = {x: jmh_rows(files[VERSIONS[3]][x]) for x in VARIANTS}
    want_pct = sorted(100 * (rows_b[x][k][0] - rows_a[x][k][0]) / rows_a[x][k][0] for x in VARIANTS for k in rows_a[x])
    assert len(got_pct) == len(want_pct) == 30
    for got, w in zip(got_pct, want_pct):
        assert got == pytest.approx(w, abs=three_digits(w))
    for x in VARIANTS:
        assert any(w.startswith(f"{x} · {SERVLET[0]}") for w in words)
    assert_png(client.get("/api/v1/compare/chart.png", params={"a": a, "b": b, "metric": "score"}, headers=auth).content)

    # Freeze both views.
    frozen_cmp = client.post("/api/v1/snapshots", headers=auth, json={
        "compare": {"a": a, "b": b, "metric": "score"}, "view": {"path": "/compare", "query": f"a={a}&b={b}&metric=score"}})
    assert frozen_cmp.status_code == 201, frozen_cmp.text
    frozen_hist = client.post("/api/v1/snapshots", headers=auth, json={
        "history": {"trail": trail["id"], "metric": "score", "kind": "trail"},
        "view": {"path": f"/p/{slug}/history", "query": "metric=score"}})
    assert frozen_hist.status_code == 201, frozen_hist.text
    fc, fh = frozen_cmp.json(), frozen_hist.json()
    assert fc["kind"] == "compare" and fh["kind"] == "history"
    assert fc["data"]["compare"] == client.get("/api/v1/compare", params={"a": a, "b": b, "metric": "score"},
                                               headers=auth).json()
    # The compare table: a / b / diff of the auto agent's servlet row, from the files.
    sa, sb = rows_a["auto-instrumentation"][SERVLET][0], rows_b["auto-instrumentation"][SERVLET][0]
    line = next(ln for ln in fc["markdown"].splitlines() if ln.startswith(f"| auto-instrumentation | {SERVLET[0]} |")
                and "sample" in ln)
    cells = [c.strip() for c in line.strip("|").split("|")]
    a_txt, b_txt, diff_txt = (x.strip() for x in cells[3].rstrip("*").split(" / "))
    assert (num(a_txt), num(b_txt)) == (pytest.approx(sa, abs=three_digits(sa)), pytest.approx(sb, abs=three_digits(sb)))
    assert num(diff_txt) == pytest.approx(sb - sa, abs=three_digits(sb - sa))
    assert fc["markdown"].count("\n| ") == 1 + 30  # header + one row per matched cell
    hist_rows = [ln for ln in fh["markdown"].splitlines() if ln.startswith("| `")]
    assert [r.split("|")[2].strip() for r in hist_rows] == VERSIONS
    assert "◆" in hist_rows[3] and "regression" in hist_rows[3]
    # Private snapshots are refused without a token.
    assert client.get(f"/api/v1/snapshots/{fc['slug']}").status_code == 404
    assert client.get(f"/api/v1/snapshots/{fc['slug']}/chart.svg").status_code == 404
    images = {s: client.get(f"/api/v1/snapshots/{s}/chart.svg", headers=auth) for s in (fc["slug"], fh["slug"])}
    assert all(r.status_code == 200 for r in images.values())
    assert client.get(f"/api/v1/snapshots/{fc['slug']}/charts/score.svg", headers=auth).status_code == 404

    # New settings (no change under 50% is a change) and every run analysed again...
    set_settings(client, admin_token, slug, {"metrics": ["score"], "detection": {"min_magnitude_pct": 50}})
    with unit_of_work() as session:
        for s in slugs:
            run_id = client.get(f"/api/v1/runs/{s}", headers=auth).json()["id"]
            enqueue(session, "analysis.run", run_id, force=True)
    for s in slugs:
        wait_until(lambda s=s: client.get(f"/api/v1/runs/{s}", headers=auth).json()["analysis_status"] == "done",
                   60, f"the re-analysis of {s}")
    # ...and one more version on the trail, 30% slower on servlets: the live views change...
    newer = scaled(files[VERSIONS[-1]]["auto-instrumentation"], "ServletBenchmark", 1.3)
    wait_analysed(client, upload_version(client, slug, token, "2.22.0", {
        **files[VERSIONS[-1]], "auto-instrumentation": newer}), token=token)
    live = client.get(f"/api/v1/trails/{trail['id']}", params={"metric": "score"}, headers=auth).json()
    assert len(live["points"]) == len(VERSIONS) + 1
    live_cmp = client.get("/api/v1/compare/chart.svg", params={"a": a, "b": b, "metric": "score"}, headers=auth)
    assert live_cmp.status_code == 200
    # ...the frozen ones did not: same data, same tables, same image bytes.
    for frozen in (fc, fh):
        later = client.get(f"/api/v1/snapshots/{frozen['slug']}", headers=auth).json()
        assert json.dumps(later["data"], sort_keys=True) == json.dumps(frozen["data"], sort_keys=True)
        assert later["markdown"] == frozen["markdown"]
        again = client.get(f"/api/v1/snapshots/{frozen['slug']}/chart.svg", headers=auth)
        assert again.content == images[frozen["slug"]].content
    assert any(w.startswith("alert #") for w in texts(images[fh["slug"]].content))


def test_snapshot_bodies_are_checked(client, worker, make_project, admin_token):
    _, token = make_project()
    auth = {"Authorization": f"Bearer {token}"}
    for body, why in (({}, "exactly one"), ({"run": "abc", "compare": {"a": "x", "b": "y"}}, "exactly one"),
                      ({"compare": {"a": "x", "b": "y", "metric": "nonsense"}}, "unknown metric"),
                      ({"history": {"trail": 0}}, "greater than or equal")):
        r = client.post("/api/v1/snapshots", headers=auth, json=body)
        assert r.status_code == 422 and why in r.text, (body, r.text)
    assert client.post("/api/v1/snapshots", headers=auth, json={"history": {"trail": 2**31 - 1}}).status_code == 404
    assert client.post("/api/v1/snapshots", headers=auth, json={"compare": {"a": "nope", "b": "nope2"}}).status_code == 404


def raw_percentiles(path, threads: int, p: float) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Per label, and over all labels ("*"): the p-th percentile (inverted CDF, as an HDR histogram answers)
    of the raw elapsed times."""
    out: dict[str, list[int]] = {}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            if thread_group_size(row["threadName"]) == threads:
                out.setdefault(row["label"], []).append(int(row["elapsed"]))
                out.setdefault("*", []).append(int(row["elapsed"]))
    return {k: float(np.percentile(np.array(v), p, method="inverted_cdf")) for k, v in out.items()}


def test_the_run_pages_percentile_spectrum_as_an_image(client, worker, make_project, scratch):
    _, _, run = ab_run(client, make_project, scratch)
    load = next(ld for ld in run["loads"] if ld["label"] == "50 threads")
    svg = client.get(f"/api/v1/runs/{run['slug']}/charts/percentiles.svg", params={"load": load["id"]})
    assert svg.status_code == 200 and svg.headers["cache-control"] == "public, max-age=300"
    words = texts(svg.content)
    written = sorted(num(m[1]) for w in words if (m := re.fullmatch(rf"p99\.9 ({NUMBER})", w)))
    expected = sorted([*raw_percentiles(scratch / "b.jtl", 50, 99.9).values(),
                       *raw_percentiles(scratch / "a.jtl", 50, 99.9).values()])
    # HDR keeps 3 significant digits and the label 3 more: within 0.1% + half a unit of the last digit.
    assert len(written) == len(expected) == 2 * (len(LABELS) + 1)
    for got, want in zip(written, expected):
        assert got == pytest.approx(want, rel=1e-3, abs=three_digits(want))
    for name in [*LABELS, "All scenarios"]:
        assert f"baseline · {name}" in words and f"agent · {name}" in words
    assert_png(client.get(f"/api/v1/runs/{run['slug']}/charts/percentiles.png").content)
    assert client.get(f"/api/v1/runs/{run['slug']}/charts/percentiles.svg", params={"load": 2**31 - 1}).status_code == 404


def raw_throughput_mean(path, threads: int, interval_ms: int) -> float:  # type: ignore[no-untyped-def]
    """The mean of the thread group's throughput over time, computed here from the raw file's rows."""
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if thread_group_size(r["threadName"]) == threads]
    starts = np.array([float(r["timeStamp"]) for r in rows])
    _, rates = throughput([(starts, starts + np.array([float(r["elapsed"]) for r in rows]))], interval_ms)
    return float(np.mean(rates))


def test_the_run_pages_series_over_time_as_an_image(client, worker, make_project, scratch):
    """Throughput over time at one load level: each variant's line ends with the mean of its points, as
    computed here from that thread group's rows in the raw file."""
    _, _, run = ab_run(client, make_project, scratch)
    load = next(ld for ld in run["loads"] if ld["label"] == "50 threads")
    url = f"/api/v1/runs/{run['slug']}/charts/series.svg"
    svg = client.get(url, params={"metric": "throughput", "load": load["id"]})
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml", svg.text
    words = texts(svg.content)
    means = sorted(num(m[1]) for w in words if (m := re.fullmatch(rf"mean ({NUMBER})", w)))
    interval = next(s["interval_ms"] for s in client.get(f"/api/v1/runs/{run['slug']}/series",
                                                         params={"metric": "throughput"}).json()["items"])
    expected = sorted(raw_throughput_mean(scratch / f, 50, interval) for f in ("a.jtl", "b.jtl"))
    assert len(means) == 2 and all(got == pytest.approx(want, rel=1e-3, abs=three_digits(want))
                                   for got, want in zip(means, expected)), (means, expected)
    assert "baseline" in words and "agent" in words
    assert client.get(url, params={"metric": "throughput", "load": load["id"]},
                      headers={"If-None-Match": svg.headers["etag"]}).status_code == 304
    assert_png(client.get(url.replace(".svg", ".png"), params={"metric": "throughput", "load": load["id"]}).content)
    assert client.get(url, params={"metric": "throughput", "load": 2**31 - 1}).status_code == 404
    assert client.get(url, params={"metric": "no_such_series", "load": load["id"]}).status_code == 404
    assert client.get(url, params={"metric": "Bad Metric!", "load": load["id"]}).status_code == 422

"""`benchtrail`: the command line CI jobs and people use.

Exit codes (stable, documented in README.md):
  0 success · 2 usage error · 3 upload rejected (bad file, auth, limits) · 4 ingestion failed ·
  5 an alert was raised (with --fail-on-alert), or compare --fail-on-worse found a cell worse after
  adjusting for every comparison · 6 server unreachable, server error or timeout (after retrying
  503/429/502/504, connection errors and timeouts for --retry-timeout seconds) · 7 a pass/fail
  criterion failed (with --wait)
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

from benchtrail_runner.client import ApiError, Client, new_idempotency_key
from benchtrail.cli.format import print_comparison, print_run
from benchtrail.multiplicity import FALSE_DISCOVERY_RATE
from benchtrail.runs import lifecycle

EXIT_USAGE, EXIT_REJECTED, EXIT_INGEST_FAILED, EXIT_ALERT, EXIT_SERVER, EXIT_CRITERIA = 2, 3, 4, 5, 6, 7

app = typer.Typer(help="Benchtrail: benchmark history for agents, gateways and services.",
                  no_args_is_help=True, add_completion=False)
runs_app = typer.Typer(help="List runs.", no_args_is_help=True)
admin_app = typer.Typer(help="Administration on the server host (talks to the database directly).",
                        no_args_is_help=True)
app.add_typer(runs_app, name="runs")
app.add_typer(admin_app, name="admin")
console = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True)

UrlOpt = Annotated[str, typer.Option("--url", envvar="BENCHTRAIL_URL", help="API base URL")]
TokenOpt = Annotated[str | None, typer.Option("--token", envvar="BENCHTRAIL_TOKEN", help="API token")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines")]
RetryOpt = Annotated[float, typer.Option(
    "--retry-timeout", envvar="BENCHTRAIL_RETRY_TIMEOUT",
    help="Seconds to keep retrying while the server answers 503/429/502/504 or cannot be reached "
         "(exponential backoff with jitter); 0 = no retries")]


def retrying_client(url: str, token: str | None, retry_timeout: float) -> Client:
    def on_wait(message: str) -> None:
        err.print(f"[yellow]waiting:[/] {message}", highlight=False)

    return Client(url, token, retry_timeout=max(0.0, retry_timeout), on_wait=on_wait)


def print_json(data: Any) -> None:
    """`--json` output: plain JSON on stdout, never styled, so FORCE_COLOR (set by many CI systems and tools)
    cannot put terminal colour codes in front of `jq`."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def fail(code: int, message: str) -> NoReturn:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ApiError as exc:
        fail(EXIT_SERVER if exc.status >= 500 else EXIT_REJECTED, str(exc))
    except (httpx.HTTPError, TimeoutError) as exc:
        fail(EXIT_SERVER, f"{type(exc).__name__}: {exc}")


LOAD_KEYS = {"threads", "concurrency", "rate"}


def _epoch_ms(value: str) -> int:
    """`started=`: ms since the epoch (`date +%s%3N`) or an ISO 8601 time with its zone."""
    if value.isdigit():
        return int(value)
    at = datetime.fromisoformat(value)
    if at.tzinfo is None:
        raise ValueError(value)
    return round(at.timestamp() * 1000)


def parse_variant(spec: str) -> tuple[str, Path, dict[str, Any]]:
    """NAME=FILE[;key=value...]: keys scenario, format, warmup, started, timestamp_format, timestamp_zone,
    threads|concurrency|rate, requests, duration."""
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        fail(EXIT_USAGE, f"--variant '{spec}' must be NAME=FILE[;key=value...]")
    path_text, *options = rest.split(";")
    path = Path(path_text)
    if not path.is_file():
        fail(EXIT_USAGE, f"--variant {name}: no such file '{path}'")
    entry: dict[str, Any] = {"variant": name}
    load: dict[str, Any] = {}
    for opt in options:
        key, sep, value = opt.partition("=")
        if not sep:
            fail(EXIT_USAGE, f"--variant {name}: option '{opt}' must be key=value")
        try:
            if key in ("scenario", "format", "timestamp_format", "timestamp_zone"):
                entry[key] = value
            elif key == "warmup":
                entry["warmup_s"] = float(value)
            elif key == "started":
                entry["started_ms"] = _epoch_ms(value)
            elif key in LOAD_KEYS:
                load.update(kind=key, value=float(value))
            elif key == "requests":
                load["requests"] = int(value)
            elif key == "duration":
                load["duration_s"] = float(value)
            else:
                fail(EXIT_USAGE, f"--variant {name}: unknown option '{key}' (scenario, format, warmup, "
                                 "started, timestamp_format, timestamp_zone, threads, concurrency, rate, requests, "
                                 "duration)")
        except ValueError:
            what = "ms since the epoch or an ISO 8601 time with its zone" if key == "started" else "a number"
            fail(EXIT_USAGE, f"--variant {name}: '{opt}' needs {what}")
    if load:
        load.setdefault("kind", "requests" if "requests" in load else "duration")
        entry["load"] = load
    if "scenario" not in entry and (m := CRITERION_FILE.search(path.resolve().as_posix())):
        entry["scenario"] = m.group(1)   # Criterion's files do not name their benchmark; its folders do
    return name, path, entry


# target/criterion/<group>/<function>/<value>/new/estimates.json: the benchmark id is the folders' path.
CRITERION_FILE = re.compile(r"/criterion/(.+)/(?:new|base|change)/(?:estimates|sample)\.json$")


CRITERION = re.compile(r"\s*([a-z0-9_]+)\s*(<=|>=|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*")


def parse_criterion(spec: str) -> dict[str, Any]:
    """METRIC OP VALUE[;variant=V][;scenario=S][;overhead], e.g. 'latency_p99 < 250;variant=agent': a plan's
    pass/fail criterion (the server checks the metric)."""
    head, *options = spec.split(";")
    m = CRITERION.fullmatch(head)
    if m is None:
        fail(EXIT_USAGE, f"--criterion '{spec}' must be METRIC OP VALUE (op <, <=, > or >=), "
                         "then ;variant=V ;scenario=S ;overhead")
    out: dict[str, Any] = {"metric": m[1], "op": m[2], "value": float(m[3])}
    for opt in options:
        key, sep, value = opt.strip().partition("=")
        if key == "overhead" and not sep:
            out["overhead"] = True
        elif key in ("variant", "scenario") and sep and value:
            out[key] = value
        else:
            fail(EXIT_USAGE, f"--criterion '{spec}': unknown option '{opt}' (variant=V, scenario=S, overhead)")
    return out


@app.command()
def upload(
    project: Annotated[str, typer.Option(help="Project slug")],
    variant: Annotated[list[str], typer.Option(help="NAME=FILE[;scenario=S;concurrency=N;requests=N;...]; repeat")],
    url: UrlOpt = "http://127.0.0.1:8400",
    token: TokenOpt = None,
    environment: Annotated[str | None, typer.Option(help="Environment name")] = None,
    cpus: Annotated[float | None, typer.Option(help="Environment: CPUs")] = None,
    memory_mb: Annotated[int | None, typer.Option(help="Environment: memory in MB")] = None,
    instance_type: Annotated[str | None, typer.Option(help="Environment: instance type")] = None,
    os_name: Annotated[str | None, typer.Option("--os", help="Environment: operating system")] = None,
    runtime: Annotated[str | None, typer.Option(help="Environment: runtime (JVM, Go, ...)")] = None,
    agent_version: Annotated[str | None, typer.Option(help="Agent version under test")] = None,
    app_version: Annotated[str | None, typer.Option(help="Application version")] = None,
    commit: Annotated[str | None, typer.Option(help="Commit SHA")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch")] = None,
    label: Annotated[list[str], typer.Option(help="key=value label; repeat")] = [],  # noqa: B006
    reference: Annotated[str | None, typer.Option(help="Reference variant (default: the first)")] = None,
    format: Annotated[str | None, typer.Option(help="Force the format of every file")] = None,
    idempotency_key: Annotated[str | None, typer.Option(
        help="Same key twice makes one run; default: a new key, reused by this command's retries")] = None,
    wait: Annotated[bool, typer.Option(help="Wait for ingestion and print the run")] = False,
    wait_timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 600,
    criterion: Annotated[list[str], typer.Option(help=(
        "Pass/fail criterion 'METRIC OP VALUE[;variant=V][;scenario=S][;overhead]', e.g. 'latency_p99 < 250' or "
        "'latency_p75 < 0.1;overhead' (variant minus reference); repeat. With --wait a failed one exits 7"))] = [],  # noqa: B006
    fail_on_alert: Annotated[bool, typer.Option(help="With --wait: exit 5 when the run raised an alert")] = False,
    retry_timeout: RetryOpt = 300,
    json_out: JsonOpt = False,
) -> None:
    """Upload result files as one run (one file or more per variant)."""
    criteria = [parse_criterion(c) for c in criterion]
    entries, paths = [], []
    for spec in variant:
        _, path, entry = parse_variant(spec)
        if format and "format" not in entry:
            entry["format"] = format
        entries.append(entry)
        paths.append(path)
    labels = {}
    for item in label:
        k, sep, v = item.partition("=")
        if not sep:
            fail(EXIT_USAGE, f"--label '{item}' must be key=value")
        labels[k] = v
    env = {k: v for k, v in dict(name=environment, cpus=cpus, memory_mb=memory_mb, instance_type=instance_type,
                                   os=os_name, runtime=runtime).items() if v is not None}
    metadata = {"files": entries, "labels": labels, "agent_version": agent_version, "app_version": app_version,
                "commit": commit, "branch": branch, "reference": reference, "environment": env or None,
                **({"criteria": criteria} if criteria else {})}
    client = retrying_client(url, token, retry_timeout)
    idempotency_key = idempotency_key or new_idempotency_key()
    total = sum(p.stat().st_size for p in paths)
    show_progress = not json_out and sys.stderr.isatty() and total > 5 * 1024 * 1024
    if show_progress:
        with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                      TransferSpeedColumn(), console=err) as progress:
            task = progress.add_task("uploading", total=total)
            accepted = call(client.upload, project, json.dumps(metadata), paths, idempotency_key,
                            lambda n: progress.advance(task, n))
    else:
        accepted = call(client.upload, project, json.dumps(metadata), paths, idempotency_key)
    if not json_out:
        for f in accepted.get("files") or []:
            how = "detected" if f["detected"] else "as given"
            err.print(f"{f['filename']} ({f['variant']}): read as {f['format']} ({how})", highlight=False)
    if not wait:
        if json_out:
            print_json({"run": accepted["run"], "id": accepted["id"], "permalink": accepted["permalink"],
                        "status": accepted["status"], "files": accepted.get("files") or []})
        else:
            console.print(f"run {accepted['run']} accepted ({accepted['status']}): {accepted['permalink']}")
        return
    run = call(_follow, client, accepted["run"], wait_timeout, show_progress=False)
    alerts = run.get("alerts") or []
    if json_out:
        print_json({"run": run["slug"], "id": run["id"], "permalink": run["permalink"],
                    "status": run["status"], "status_detail": run.get("status_detail"),
                    "is_valid": run["is_valid"], "criteria": run.get("criteria"), "alerts": alerts,
                    "files": accepted.get("files") or []})
    else:
        print_run(run, console)
        print_overheads(client, run)
    if run["status"] != "completed":
        fail(EXIT_INGEST_FAILED, f"run {run['slug']} {run['status']}: {run.get('status_detail')}")
    if fail_on_alert and run.get("analysis_status") == "failed":
        fail(EXIT_INGEST_FAILED, f"run {run['slug']}: analysis failed, cannot tell whether it raised an alert")
    if fail_on_alert and alerts:
        for a in alerts:
            err.print(f"alert: {a.get('summary', a)}  {a.get('permalink', run['permalink'])}", highlight=False)
        raise typer.Exit(EXIT_ALERT)
    _exit_on_failed_criteria(run)


@app.command("import")
def import_history(
    history: Annotated[Path, typer.Argument(help="github-action-benchmark data.js (or its JSON), or Bencher reports "
                                                 "(JSON array of GET /v0/projects/{project}/reports)",
                                            exists=True, dir_okay=False)],
    project: Annotated[str, typer.Option(help="Project slug")],
    url: UrlOpt = "http://127.0.0.1:8400",
    token: TokenOpt = None,
    format: Annotated[str | None, typer.Option(help="gab-history or bencher-reports (default: detected)")] = None,
    variant: Annotated[str, typer.Option(help="Variant of every imported run")] = "baseline",
    environment: Annotated[str | None, typer.Option(help="Environment name (default: a Bencher report's testbed)")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch (default: a Bencher report's branch)")] = None,
    wait: Annotated[bool, typer.Option(help="Wait until every imported run is ingested")] = False,
    wait_timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 1800,
    retry_timeout: RetryOpt = 300,
    json_out: JsonOpt = False,
) -> None:
    """Import a history from another tool: one backdated run per entry, oldest first, so trails and the
    change-point detector see the past. Entries imported before are left as they are."""
    metadata = {"variant": variant, **({"format": format} if format else {}),
                **({"environment": {"name": environment}} if environment else {}),
                **({"branch": branch} if branch else {})}
    client = retrying_client(url, token, retry_timeout)
    result = call(client.post_files, f"/api/v1/projects/{project}/imports", json.dumps(metadata), [history])
    runs = result["runs"]
    if wait:
        deadline = time.monotonic() + wait_timeout
        for r in runs:
            done = call(client.wait_for_run, r["run"], max(1.0, deadline - time.monotonic()))
            r["status"] = done["status"]
    if json_out:
        print_json(result)
    else:
        console.print(f"{history.name}: read as {result['format']}; {result['imported']} run(s) imported, "
                      f"{result['already']} imported before", highlight=False)
        for r in runs:
            console.print(f"  {r['started_at'][:19]}  {(r['commit'] or '-')[:12]:<12}  {r['status']:<10} "
                          f"{r['permalink']}{'  (before)' if r['duplicate'] else ''}", highlight=False)
    failed = [r for r in runs if r["status"] == "failed"]
    if failed:
        fail(EXIT_INGEST_FAILED, f"{len(failed)} imported run(s) failed to ingest, e.g. {failed[0]['permalink']}")


@app.command()
def export(run: Annotated[str, typer.Argument(help="Run slug")],
           format: Annotated[str, typer.Option(help="bmf: Bencher Metric Format JSON")] = "bmf",
           output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (default: stdout)")] = None,
           url: UrlOpt = "http://127.0.0.1:8400", token: TokenOpt = None) -> None:
    """Export a run's results in another tool's format (BMF: what `bencher run --adapter json` reads)."""
    if format != "bmf":
        fail(EXIT_USAGE, f"--format {format}: only bmf is known")
    data = call(Client(url, token).get, f"/api/v1/runs/{run}/bmf")
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        err.print(f"run {run}: {len(data)} benchmark(s) written to {output}", highlight=False)


def _exit_on_failed_criteria(run: dict[str, Any]) -> None:
    failed = [c for c in run.get("criteria") or [] if c.get("ok") is False]
    for c in failed:
        where = " / ".join(str(x) for x in (c.get("variant"), c.get("scenario"), c.get("load")) if x)
        observed = c.get("observed")
        seen = f"{observed:.4g}" if isinstance(observed, (int, float)) else "nothing"
        err.print(f"criterion failed: {c['criterion']} ({where}): observed {seen}", highlight=False)
    if failed:
        raise typer.Exit(EXIT_CRITERIA)


@app.command("run")
def run_plan(
    plan_file: Annotated[Path, typer.Argument(help="Plan (YAML or JSON)", exists=True, dir_okay=False)],
    project: Annotated[str, typer.Option(help="Project slug")],
    url: UrlOpt = "http://127.0.0.1:8400",
    token: TokenOpt = None,
    agent_version: Annotated[str | None, typer.Option(help="Agent version under test")] = None,
    commit: Annotated[str | None, typer.Option(help="Commit SHA")] = None,
    branch: Annotated[str | None, typer.Option(help="Branch")] = None,
    wait: Annotated[bool, typer.Option(help="Follow progress until the run ends, then print it")] = False,
    wait_timeout: Annotated[float, typer.Option(help="Seconds to wait with --wait")] = 6 * 3600,
    idempotency_key: Annotated[str | None, typer.Option(
        help="Same key twice starts one run; default: a new key, reused by this command's retries")] = None,
    retry_timeout: RetryOpt = 300,
    json_out: JsonOpt = False,
) -> None:
    """Store a plan (a new version if it changed) and run it on its runner pool."""
    client = retrying_client(url, token, retry_timeout)
    text = plan_file.read_text()
    # Storing an unchanged plan stores nothing new, so this POST is safe to retry as it is.
    stored = call(lambda: client._check(client.request(
        "POST", f"/api/v1/projects/{project}/plans", content=text, headers={"Content-Type": "application/yaml"})))
    started = call(client.post, f"/api/v1/projects/{project}/plans/{stored['name']}/runs",
                   {"agent_version": agent_version, "commit": commit, "branch": branch},
                   headers={"Idempotency-Key": idempotency_key or new_idempotency_key()})
    slug = started["slug"]
    if not json_out:
        err.print(f"plan '{stored['name']}' v{stored['version']}: run {slug} queued on pool "
                  f"'{stored['pool']}': {started['permalink']}", highlight=False)
    if not wait:
        if json_out:
            print_json({"run": slug, "id": started["id"], "permalink": started["permalink"],
                        "status": started["status"]})
        return
    run = call(_follow, client, slug, wait_timeout, show_progress=not json_out)
    if json_out:
        print_json({"run": slug, "id": run["id"], "permalink": run["permalink"],
                    "status": run["status"], "status_detail": run.get("status_detail"),
                    "is_valid": run["is_valid"], "criteria": run.get("criteria")})
    else:
        print_run(run, console)
        print_overheads(client, run)
    if run["status"] != "completed":
        fail(EXIT_INGEST_FAILED, f"run {slug} {run['status']}: {run.get('status_detail')}")
    _exit_on_failed_criteria(run)


def _settled(run: dict[str, Any]) -> bool:
    return lifecycle.settled(run["status"], run.get("analysis_status"))


def _follow(client: Client, slug: str, timeout: float, show_progress: bool) -> dict[str, Any]:
    """Follow the run's server-sent events (a progress bar for a plan run) until it settles; then the
    run itself. Seen the moment it changes: no polling delay."""
    deadline = time.monotonic() + timeout
    with Progress("[progress.description]{task.description}", BarColumn(), "{task.percentage:>5.1f}%",
                  "{task.fields[rate]}", console=err, disable=not show_progress) as bar:
        task = bar.add_task("queued", total=100, rate="")
        try:
            with client.http.stream("GET", f"/api/v1/runs/{slug}/events", timeout=None) as stream:
                for line in stream.iter_lines():
                    if not line.startswith("data: "):
                        continue
                    event = json.loads(line[6:])
                    p = event.get("progress") or {}
                    rate = f"{p['achieved_rate']:.0f} req/s" if p.get("achieved_rate") else ""
                    bar.update(task, completed=p.get("percent") or 0, rate=rate,
                               description=f"{event['status']}: {p.get('step', '')}"[:60])
                    if _settled(event) or time.monotonic() > deadline:
                        break
        except httpx.TransportError as exc:
            # The live stream broke (server restart, outage): poll instead, with the client's retries.
            client.on_wait(f"progress stream lost ({type(exc).__name__}); polling the run instead")
    return client.wait_for_run(slug, max(1.0, deadline - time.monotonic()), until=_settled,
                               what="to end and be analysed")


@app.command()
def show(run: Annotated[str, typer.Argument(help="Run slug")], url: UrlOpt = "http://127.0.0.1:8400",
         token: TokenOpt = None, json_out: JsonOpt = False) -> None:
    """Show a run with every cell."""
    client = Client(url, token)
    data = call(client.get, f"/api/v1/runs/{run}")
    if json_out:
        print_json(data)
    else:
        print_run(data, console)
        print_overheads(client, data)


def print_overheads(client: Client, run: dict[str, Any]) -> None:
    """Each variant against the run's reference for the metrics its project analyses (as the run page's
    lead table): the difference, its 95% interval and the verdict."""
    if run["status"] != "completed" or len(run["variants"]) < 2:
        return
    analysed = call(client.get, f"/api/v1/projects/{run['project']}/settings")["analysis"]["metrics"]
    present = [m for m in analysed if any(c.get(m) is not None for c in run["cells"])]
    rows = [{"a_variant": o["reference_variant"], "b_variant": o["variant"], "cell": o["cell"], "metric": m,
             "result": o["result"], "p_adjusted": o.get("p_adjusted")}
            for m in present for o in call(client.get, f"/api/v1/runs/{run['slug']}/overheads", metric=m)["items"]]
    if rows:
        print_comparison(rows, console, title="overhead against the reference (variant − reference)")


@app.command()
def exclude(run: Annotated[str, typer.Argument(help="Run slug")],
            reason: Annotated[str, typer.Option(help="Why the run does not measure what its trails track")],
            url: UrlOpt = "http://127.0.0.1:8400", token: TokenOpt = None, json_out: JsonOpt = False) -> None:
    """Exclude a completed run from its trails (uploader token): its points leave them and it never alerts;
    it stays, marked invalid with the reason. `benchtrail restore` undoes it."""
    _print_exclusion(call(Client(url, token).put, f"/api/v1/runs/{run}/exclusion", {"reason": reason}), json_out)


@app.command()
def restore(run: Annotated[str, typer.Argument(help="Run slug")], url: UrlOpt = "http://127.0.0.1:8400",
            token: TokenOpt = None, json_out: JsonOpt = False) -> None:
    """Put an excluded run back in its trails (uploader token); its own checks decide its validity again."""
    _print_exclusion(call(Client(url, token).delete, f"/api/v1/runs/{run}/exclusion"), json_out)


def _print_exclusion(data: dict[str, Any], json_out: bool) -> None:
    if json_out:
        print_json(data)
    elif data["excluded"]:
        console.print(f"run {data['run']} excluded from its trails by {data['by']}: {data['reason']}", highlight=False)
    else:
        console.print(f"run {data['run']} is in its trails" if data["is_valid"] else
                      f"run {data['run']} is not excluded, but stays out of its trails: a validity check failed "
                      f"(benchtrail show {data['run']})", highlight=False)


@runs_app.command("list")
def runs_list(project: Annotated[str, typer.Option(help="Project slug")], url: UrlOpt = "http://127.0.0.1:8400",
              token: TokenOpt = None, branch: str | None = None, agent_version: str | None = None,
              environment: str | None = None, per_page: int = 50, json_out: JsonOpt = False) -> None:
    """List a project's runs, newest first."""
    data = call(Client(url, token).get, f"/api/v1/projects/{project}/runs", branch=branch,
                agent_version=agent_version, environment=environment, per_page=per_page)
    if json_out:
        print_json(data)
        return
    for r in data["items"]:
        console.print(f"{r['slug']}  {r['created_at'][:19]}  {r['status']:<10} agent={r['agent_version'] or '-'} "
                      f"branch={r['branch'] or '-'} commit={(r['commit'] or '-')[:12]}  {r['permalink']}")
    console.print(f"{len(data['items'])} of {data['total']} runs")


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="The earlier run (slug)")],
    run_b: Annotated[str, typer.Argument(help="The run compared with it (slug)")],
    metric: Annotated[list[str] | None, typer.Option(
        help="Metric to compare (repeat for several), e.g. latency_p99, throughput, error_rate; "
             "default: per cell the first of latency_p75, score, throughput it has")] = None,
    a_variant: Annotated[str | None, typer.Option(help="Compare this variant of run a ...")] = None,
    b_variant: Annotated[str | None, typer.Option(help="... with this variant of run b (default: same names)")] = None,
    fail_on_worse: Annotated[bool, typer.Option(
        help="Exit 5 when a cell of run b is worse: its 95% interval lies on the worse side of zero, the change "
             "is 1% or more, and it stays significant with the false discovery rate over every compared cell and "
             "metric held at 5% (Benjamini-Hochberg adjusted p < 0.05)")] = False,
    url: UrlOpt = "http://127.0.0.1:8400", token: TokenOpt = None, json_out: JsonOpt = False,
) -> None:
    """Compare two runs cell by cell (b − a) with the server's statistics: per cell the difference, its
    95% interval over the repetitions and the verdict."""
    client = Client(url, token)
    asked: list[str | None] = list(metric) if metric else [None]   # None: the server's default per cell
    rows = [row for m in asked for row in call(
        client.get, "/api/v1/compare", a=run_a, b=run_b, metric=m, a_variant=a_variant, b_variant=b_variant)["items"]]
    if fail_on_worse and len(asked) > 1:
        # The server adjusts over the cells of one metric; the gate counts every metric asked too.
        from benchtrail.multiplicity import adjusted_p_values

        for r, p in zip(rows, adjusted_p_values([r["result"].get("p_value") for r in rows])):
            r["p_adjusted"] = p
    if json_out:
        print_json({"a": run_a, "b": run_b, "items": rows})
    elif not rows:
        console.print("no cells in common (same variant, scenario, load and mode, and a value of the metric)")
    else:
        # Adjusted over one answer of the server (one metric, or each cell's default), or all rows by the gate.
        print_comparison(rows, console, one_family=fail_on_worse or len(asked) == 1)
    if fail_on_worse:
        worse = [r for r in rows if r["result"]["worse"]]
        failing = failing_rows(rows)
        for r in worse:
            res = r["result"]
            rel = "" if res["rel_diff"] is None else f" ({res['rel_diff'] * 100:+.1f}%)"
            adjusted = "" if r["p_adjusted"] is None else f", adjusted p {r['p_adjusted']:.2g} over {len(rows)} comparisons"
            what = "worse" if r in failing else "not significant once every comparison is counted"
            err.print(f"{what}: {r['b_variant']} / {r['cell']['scenario']} / {r['cell']['load_label']}: "
                      f"{r['metric']} {res['verdict']}{rel}{adjusted}", highlight=False)
        if failing:
            raise typer.Exit(EXIT_ALERT)


def failing_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The worse rows that fail `compare --fail-on-worse`: those whose adjusted p (`p_adjusted`, over every
    compared row of every metric asked) is under the false discovery rate, or that have none."""
    return [r for r in rows if r["result"]["worse"]
            and (r["p_adjusted"] is None or r["p_adjusted"] < FALSE_DISCOVERY_RATE)]


@admin_app.command("create-project")
def admin_create_project(slug: str, name: str | None = None, description: str = "",
                         private: Annotated[bool, typer.Option(help="Invisible without a token")] = False) -> None:
    """Create a project (needs BENCHTRAIL_DATABASE_URL)."""
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.errors import AppError
    from benchtrail.projects.schemas import ProjectCreate
    from benchtrail.projects.service import create_project

    try:
        with unit_of_work() as session:
            create_project(session, ProjectCreate(slug=slug, name=name, description=description,
                                                  is_public=not private))
    except AppError as exc:
        fail(EXIT_REJECTED, exc.detail)
    console.print(f"project {slug} created ({'private' if private else 'public'})")


@admin_app.command("create-token")
def admin_create_token(role: Annotated[str, typer.Option(help="viewer | uploader | admin | runner")],
                       name: Annotated[str, typer.Option(help="What the token is for")],
                       project: Annotated[str | None, typer.Option(help="Project slug; omit for site-wide")] = None,
                       pools: Annotated[str | None, typer.Option(
                           help="Runner tokens: comma-separated pools it may claim runs from; omit = every pool")] = None,
                       json_out: JsonOpt = False) -> None:
    """Create a token; it is printed once and stored hashed."""
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.errors import AppError
    from benchtrail.projects.service import by_slug, create_token

    try:
        with unit_of_work() as session:
            target = None
            if project is not None:
                target = by_slug(session, project)
                if target is None:
                    fail(EXIT_REJECTED, f"project '{project}' not found")
            created = create_token(session, project=target, name=name, role=role,
                                   pools=pools.split(",") if pools is not None else None)
    except AppError as exc:
        fail(EXIT_REJECTED, exc.detail)
    if json_out:
        print_json(created.model_dump(mode="json"))
    else:
        print(created.token)


@admin_app.command("reingest")
def admin_reingest(runs: Annotated[list[str] | None, typer.Argument(help="Run slugs")] = None,
                   project: Annotated[list[str] | None, typer.Option(
                       help="Every completed run of this project (repeat); with no run and no project: every "
                            "completed run of every project")] = None,
                   json_out: JsonOpt = False) -> None:
    """Measure completed runs again from their stored files with this version's parsers (after an upgrade
    that fixed a parser or added a measurement), oldest first, each in its own transaction: one that fails
    stays as it was. Their analyses are queued again (needs BENCHTRAIL_DATABASE_URL and the data directory)."""
    from benchtrail.db_boundary import unit_of_work
    from benchtrail.errors import AppError
    from benchtrail.ingest.service import IngestFailed, reingest_run, reingest_targets

    try:
        with unit_of_work() as session:
            found = reingest_targets(session, runs or [], project or [])
    except AppError as exc:
        fail(EXIT_REJECTED, exc.detail)
    results: list[dict[str, Any]] = []
    for slug, run_id in found:
        try:
            with unit_of_work() as session:
                done = reingest_run(session, run_id)
                result = {"run": slug, "ok": True, "cells_before": done.cells_before, "cells": done.cells,
                          "is_valid": done.run.is_valid}
        except IngestFailed as exc:
            result = {"run": slug, "ok": False, "error": str(exc), **exc.detail}
        except AppError as exc:
            result = {"run": slug, "ok": False, "error": exc.detail}
        results.append(result)
        if not json_out:
            if result["ok"]:
                console.print(f"run {slug} measured again: {result['cells']} cells (before: {result['cells_before']})"
                              f"{'' if result['is_valid'] else ', invalid'}; its analysis is queued", highlight=False)
            else:
                err.print(f"run {slug} kept as it was: {result['error']}", highlight=False)
    if json_out:
        print_json(results)
    if not all(r["ok"] for r in results):
        raise typer.Exit(EXIT_INGEST_FAILED)


def main() -> None:
    os.environ.setdefault("BENCHTRAIL_LOG_JSON", "false")
    app()


if __name__ == "__main__":
    main()

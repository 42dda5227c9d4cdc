#!/usr/bin/env python3
"""benchtrail.py: the Benchtrail client for CI jobs and people. Uploads result files as a run, waits for
it to be measured and analysed, and gates a job on it (pass/fail criteria, alerts, a comparison).

One file, Python >= 3.9, the standard library only. Your Benchtrail server serves the copy that matches
its version:

    curl -fsSL -o benchtrail.py "$BENCHTRAIL_URL/cli/benchtrail.py"
    python3 benchtrail.py upload --project P --variant baseline=base.jtl --variant agent=agent.jtl \\
        --agent-version 2.4.0 --wait --fail-on-alert

Configure with --url/--token or BENCHTRAIL_URL/BENCHTRAIL_TOKEN. `python3 benchtrail.py COMMAND --help`
explains each command. On the server host, the `benchtrail` command of the server package runs this same
code, plus `benchtrail admin`.

Exit codes (stable): 0 success · 2 usage error · 3 request rejected (bad file, auth, limits) ·
4 ingestion failed · 5 an alert was raised (--fail-on-alert), or compare --fail-on-worse found a cell
worse after adjusting for every comparison · 6 server unreachable, server error or timeout (after
retrying 503/429/502/504, connection errors and timeouts for --retry-timeout seconds) · 7 a pass/fail
criterion failed (--wait)
"""

# Compatibility: this file must run on Python 3.9 with nothing installed (tests/unit/cli checks it with
# vermin and ast.parse(feature_version=(3, 9)), and runs it on every interpreter the machine has).

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Callable, Iterator, NoReturn, Optional, Sequence

__version__ = "0.1.0"

DEFAULT_URL = "http://127.0.0.1:8400"
EXIT_OK, EXIT_USAGE, EXIT_REJECTED, EXIT_INGEST_FAILED, EXIT_ALERT, EXIT_SERVER, EXIT_CRITERIA = 0, 2, 3, 4, 5, 6, 7

# The false discovery rate held by `compare --fail-on-worse` (the server's benchtrail.multiplicity).
FALSE_DISCOVERY_RATE = 0.05

# Answers that mean "not now": the server is restarting, its database or broker is down, or we are over a
# rate limit. A 409 with Retry-After is a concurrent request with the same Idempotency-Key.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
BACKOFF_START_S = 1.0
BACKOFF_MAX_S = 30.0
# Connection refused or reset, DNS, timeouts, a server that closed the connection mid-answer.
TRANSPORT_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, OSError)


class Exit(Exception):
    """Ends the command with `code` (main() turns it into the process's exit status)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class NotTheApi(Exception):
    """A successful answer that is not the API's (a wrong --url, a proxy's page)."""


class ApiError(Exception):
    """The server answered with an error status (after any retries)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{status} {body.get('error', 'Error')}: {body.get('detail', body)}")


def say(message: str) -> None:
    """A line for people, on stderr (stdout carries the results and --json)."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def fail(code: int, message: str) -> NoReturn:
    say(f"error: {message}")
    raise Exit(code)


def new_idempotency_key() -> str:
    return f"cli-{uuid.uuid4()}"


def backoff_delay(attempt: int, retry_after: Optional[float], remaining: float) -> float:
    """Exponential backoff with jitter (half to all of 1, 2, 4 ... 30 s), at least what the server asked
    for in Retry-After, never past the retry deadline."""
    exp = min(BACKOFF_MAX_S, BACKOFF_START_S * 2 ** attempt)
    delay = random.uniform(exp / 2, exp)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return max(0.0, min(delay, remaining))


# ------------------------------------------------------------------------------------------------ HTTP

class Response:
    def __init__(self, status: int, reason: str, headers: Any, body: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))

    def retry_after(self) -> Optional[float]:
        value = self.headers.get("Retry-After") if self.headers is not None else None
        try:
            return None if value is None else max(0.0, float(value))
        except ValueError:
            return None

    def why(self) -> str:
        try:
            body = self.json()
            return f"{self.status} {body.get('error', '')}: {body.get('detail', '')}".strip()
        except ValueError:
            return f"{self.status} {self.reason}"


class Multipart:
    """A multipart/form-data body streamed from disk: its length is known beforehand, each attempt reads
    the files again, and `on_progress(n)` sees the file bytes as they are sent."""

    CHUNK = 1 << 20

    def __init__(self, fields: dict[str, str], files: Sequence[tuple[str, Path]],
                 on_progress: Optional[Callable[[int], None]] = None) -> None:
        self.boundary = f"benchtrail-{uuid.uuid4().hex}"
        self.fields = fields
        self.files = list(files)
        self.on_progress = on_progress

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    @staticmethod
    def _quote(value: str) -> str:
        return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")

    def _field_head(self, name: str) -> bytes:
        return (f'--{self.boundary}\r\nContent-Disposition: form-data; name="{self._quote(name)}"\r\n\r\n'
                ).encode("utf-8")

    def _file_head(self, name: str, path: Path) -> bytes:
        return (f'--{self.boundary}\r\nContent-Disposition: form-data; name="{self._quote(name)}"; '
                f'filename="{self._quote(path.name)}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                ).encode("utf-8")

    def _tail(self) -> bytes:
        return f"--{self.boundary}--\r\n".encode("ascii")

    def length(self) -> int:
        total = sum(len(self._field_head(k)) + len(v.encode("utf-8")) + 2 for k, v in self.fields.items())
        total += sum(len(self._file_head(k, p)) + p.stat().st_size + 2 for k, p in self.files)
        return total + len(self._tail())

    def chunks(self) -> Iterator[bytes]:
        for name, value in self.fields.items():
            yield self._field_head(name) + value.encode("utf-8") + b"\r\n"
        for name, path in self.files:
            yield self._file_head(name, path)
            with path.open("rb") as fh:
                while True:
                    data = fh.read(self.CHUNK)
                    if not data:
                        break
                    if self.on_progress is not None:
                        self.on_progress(len(data))
                    yield data
            yield b"\r\n"
        yield self._tail()


class _KeepMethod(urllib.request.HTTPRedirectHandler):
    """Follows a redirect for a read only: urllib would turn a redirected upload into a GET without its body."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> Optional[urllib.request.Request]:
        if req.get_method() not in ("GET", "HEAD"):
            return None   # urllib answers the redirect itself then (an HTTPError with its status)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


OPENER = urllib.request.build_opener(_KeepMethod)


class Client:
    """The Benchtrail API over HTTP(S). `retry_timeout` > 0: requests answered 429/502/503/504 (or 409 with
    Retry-After), connection errors and timeouts are retried with exponential backoff until that many
    seconds have passed since the first attempt; `on_wait(message)` is told what each wait is for."""

    def __init__(self, url: str, token: Optional[str], timeout: float = 300.0, retry_timeout: float = 0.0,
                 on_wait: Optional[Callable[[str], None]] = None) -> None:
        self.base = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retry_timeout = retry_timeout
        self.on_wait = on_wait or (lambda _message: None)

    def _url(self, path: str, params: Optional[dict[str, Any]] = None) -> str:
        query = ""
        if params:
            pairs = [(k, v) for k, v in params.items() if v is not None]
            query = "?" + urllib.parse.urlencode(pairs, doseq=True) if pairs else ""
        return f"{self.base}{path}{query}"

    def _headers(self, extra: Optional[dict[str, str]] = None) -> dict[str, str]:
        headers = {"User-Agent": f"benchtrail-client/{__version__}", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra or {})
        return headers

    def open(self, method: str, path: str, *, params: Optional[dict[str, Any]] = None, body: Any = None,
             headers: Optional[dict[str, str]] = None, timeout: Optional[float] = None) -> Any:
        """One attempt; the open response (the caller reads and closes it). An error status comes back as
        a response too (urllib's HTTPError is one)."""
        request = urllib.request.Request(self._url(path, params), data=body, method=method,
                                         headers=self._headers(headers))
        try:
            return OPENER.open(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as exc:
            return exc

    def request(self, method: str, path: str, *, params: Optional[dict[str, Any]] = None,
                json_body: Any = None, content: Optional[bytes] = None, multipart: Optional[Multipart] = None,
                headers: Optional[dict[str, str]] = None) -> Response:
        """One request, retried as described on the class (a multipart body is read from disk again for
        each attempt)."""
        deadline = time.monotonic() + self.retry_timeout
        attempt = 0
        extra = dict(headers or {})
        if json_body is not None:
            content = json.dumps(json_body).encode("utf-8")
            extra.setdefault("Content-Type", "application/json")
        while True:
            body: Any = content
            if multipart is not None:
                body = multipart.chunks()
                extra["Content-Type"] = multipart.content_type
                extra["Content-Length"] = str(multipart.length())
            response: Optional[Response] = None
            error: Optional[BaseException] = None
            try:
                raw = self.open(method, path, params=params, body=body, headers=extra)
                try:
                    response = Response(raw.getcode(), str(getattr(raw, "reason", "")), raw.headers, raw.read())
                finally:
                    raw.close()
            except TRANSPORT_ERRORS as exc:
                error = exc
            if response is not None:
                retry_after = response.retry_after()
                if response.status not in RETRY_STATUSES and not (response.status == 409 and retry_after is not None):
                    return response
                why = response.why()
            else:
                retry_after = None
                why = describe(error)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if response is not None:
                    return response
                assert error is not None
                raise error
            delay = backoff_delay(attempt, retry_after, remaining)
            self.on_wait(f"{method} {path}: {why}; retrying in {delay:.1f} s "
                         f"(attempt {attempt + 1}, giving up in {remaining:.0f} s)")
            time.sleep(delay)
            attempt += 1

    @staticmethod
    def check(response: Response) -> Any:
        if 300 <= response.status < 400:
            where = response.headers.get("Location") if response.headers is not None else None
            raise ApiError(response.status, {"error": "Redirect", "detail": f"the server redirects this request to "
                                             f"{where}: give that server's address as --url"})
        if response.status >= 400:
            try:
                body = response.json()
                if not isinstance(body, dict):
                    body = {"error": "HTTPError", "detail": body}
            except ValueError:
                body = {"error": "HTTPError", "detail": response.body[:500].decode("utf-8", "replace")}
            raise ApiError(response.status, body)
        try:
            return response.json()
        except ValueError:
            raise NotTheApi(f"the answer ({response.status}, {len(response.body)} bytes) is not JSON: is the URL "
                            "that of a Benchtrail server?") from None

    def get(self, path: str, **params: Any) -> Any:
        return self.check(self.request("GET", path, params=params))

    def post(self, path: str, json_body: Any, headers: Optional[dict[str, str]] = None) -> Any:
        return self.check(self.request("POST", path, json_body=json_body, headers=headers))

    def put(self, path: str, json_body: Any) -> Any:
        return self.check(self.request("PUT", path, json_body=json_body))

    def delete(self, path: str) -> Any:
        return self.check(self.request("DELETE", path))

    def post_files(self, path: str, metadata: str, files: Sequence[Path]) -> Any:
        """A multipart POST of a `metadata` field and `files` (a history import)."""
        return self.check(self.request("POST", path, multipart=Multipart({"metadata": metadata},
                                                                          [("files", p) for p in files])))

    def upload(self, project: str, metadata: str, files: Sequence[Path], idempotency_key: Optional[str],
               on_progress: Optional[Callable[[int], None]] = None) -> Any:
        """One run from `files`. Always sent with an Idempotency-Key (a new one when none is given), so a
        retried upload whose first answer was lost still makes exactly one run."""
        body = Multipart({"metadata": metadata}, [("files", p) for p in files], on_progress)
        return self.check(self.request("POST", f"/api/v1/projects/{urllib.parse.quote(project)}/runs",
                                       multipart=body,
                                       headers={"Idempotency-Key": idempotency_key or new_idempotency_key()}))

    def events(self, slug: str, read_timeout: float = 60.0) -> Iterator[Optional[dict[str, Any]]]:
        """The run's server-sent events: its state now, then every change, until it settles (the server
        ends the stream then); None for each keep-alive (every few seconds). Raises a transport error if
        the stream breaks."""
        raw = self.open("GET", f"/api/v1/runs/{urllib.parse.quote(slug)}/events",
                        headers={"Accept": "text/event-stream"}, timeout=read_timeout)
        try:
            if raw.getcode() >= 400:
                self.check(Response(raw.getcode(), str(getattr(raw, "reason", "")), raw.headers, raw.read()))
            for line in raw:
                text = line.decode("utf-8").rstrip("\r\n")
                if text.startswith("data: "):
                    yield json.loads(text[6:])
                elif text.startswith(":"):
                    yield None
        finally:
            raw.close()

    def wait_for_run(self, slug: str, timeout: float, until: Optional[Callable[[dict[str, Any]], bool]] = None,
                     what: str = "to finish", interval: float = 1.0) -> Any:
        """Poll the run until `until(run)` holds (default: it has ended); TimeoutError after `timeout`.
        Every 0.1 s at first, then less often, up to every `interval` seconds."""
        done = until or (lambda run: run["status"] in TERMINAL)
        deadline = time.monotonic() + timeout
        delay = min(0.1, interval)
        while True:
            run = self.get(f"/api/v1/runs/{slug}")
            if done(run):
                return run
            if time.monotonic() > deadline:
                raise TimeoutError(f"run {slug}: still waiting {what} after {timeout:.0f} s "
                                   f"(status '{run['status']}')")
            time.sleep(delay)
            delay = min(delay * 1.5, interval)


def describe(error: Optional[BaseException]) -> str:
    if isinstance(error, urllib.error.URLError) and not isinstance(error, urllib.error.HTTPError):
        reason = error.reason
        return f"{type(reason).__name__}: {reason}" if isinstance(reason, BaseException) else f"URLError: {reason}"
    return f"{type(error).__name__}: {error}"


def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(...)`, its failures turned into the documented exit codes."""
    try:
        return fn(*args, **kwargs)
    except ApiError as exc:
        fail(EXIT_SERVER if exc.status >= 500 else EXIT_REJECTED, str(exc))
    except NotTheApi as exc:
        fail(EXIT_SERVER, str(exc))
    except TimeoutError as exc:   # our own wait (before socket.timeout: a subclass of it since 3.10)
        fail(EXIT_SERVER, f"TimeoutError: {exc}")
    except TRANSPORT_ERRORS as exc:
        fail(EXIT_SERVER, describe(exc))


# ------------------------------------------------------------------------------------------ run states

# The server's benchtrail.runstate.lifecycle: a run ends completed, failed or cancelled; a completed run's
# alerts exist once its analysis is done (or failed).
TERMINAL = frozenset({"completed", "failed", "cancelled"})


def settled(status: str, analysis_status: Optional[str]) -> bool:
    """The run will not change by itself any more (ends --wait)."""
    return status in TERMINAL and not (status == "completed" and (analysis_status or "pending") == "pending")


def _settled_run(run: dict[str, Any]) -> bool:
    return settled(run["status"], run.get("analysis_status"))


# --------------------------------------------------------------------------------------- arguments

LOAD_KEYS = {"threads", "concurrency", "rate"}
ISO_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d+))?\s*(Z|z|[+-]\d{2}:?\d{2})?")


def epoch_ms(value: str) -> int:
    """`started=`: ms since the epoch (`date +%s%3N`) or an ISO 8601 time with its zone (`Z` or ±hh:mm)."""
    if value.isdigit():
        return int(value)
    m = ISO_TIME.fullmatch(value.strip())
    if m is None or m[4] is None:
        raise ValueError(value)
    zone = "+00:00" if m[4] in ("Z", "z") else (m[4] if ":" in m[4] else f"{m[4][:3]}:{m[4][3:]}")
    fraction = f".{(m[3] or '')[:6].ljust(6, '0')}" if m[3] else ""
    at = datetime.fromisoformat(f"{m[1]}T{m[2]}{fraction}{zone}")
    return round(at.timestamp() * 1000)


# target/criterion/<group>/<function>/<value>/new/estimates.json: the benchmark id is the folders' path.
CRITERION_FILE = re.compile(r"/criterion/(.+)/(?:new|base|change)/(?:estimates|sample)\.json$")


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
                entry["started_ms"] = epoch_ms(value)
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
    m = CRITERION_FILE.search(path.resolve().as_posix())
    if "scenario" not in entry and m:
        entry["scenario"] = m.group(1)   # Criterion's files do not name their benchmark; its folders do
    return name, path, entry


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


# ------------------------------------------------------------------------------------------ output

def print_json(data: Any) -> None:
    """`--json`: plain JSON on stdout, never styled (it goes straight to `jq`)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class Table:
    """Plain-text columns, aligned; right-aligned columns for numbers."""

    def __init__(self, columns: Sequence[tuple[str, bool]], title: Optional[str] = None) -> None:
        self.columns = list(columns)   # (title, right-aligned)
        self.title = title
        self.rows: list[list[str]] = []

    def add_row(self, *cells: str) -> None:
        self.rows.append([str(c) for c in cells])

    def render(self) -> str:
        widths = [max([len(t)] + [len(r[i]) for r in self.rows]) for i, (t, _) in enumerate(self.columns)]

        def line(cells: Sequence[str]) -> str:
            out = [c.rjust(w) if right else c.ljust(w) for c, w, (_, right) in zip(cells, widths, self.columns)]
            return "  ".join(out).rstrip()

        lines = [self.title] if self.title else []
        lines += [line([t for t, _ in self.columns]), "  ".join("-" * w for w in widths)]
        lines += [line(r) for r in self.rows]
        return "\n".join(lines) + "\n"

    def write(self, out: IO[str]) -> None:
        out.write(self.render())


COLUMNS = [("count", "count", "{:.0f}"), ("errors", "errors", "{:.0f}"), ("throughput", "req/s", "{:.2f}"),
           ("latency_mean", "mean ms", "{:.2f}"), ("latency_p50", "p50", "{:.2f}"), ("latency_p75", "p75", "{:.2f}"),
           ("latency_p90", "p90", "{:.2f}"), ("latency_p95", "p95", "{:.2f}"), ("latency_p99", "p99", "{:.2f}"),
           ("latency_p999", "p99.9", "{:.2f}"), ("cpu_pct", "cpu %", "{:.1f}"), ("rss_mb", "rss MB", "{:.0f}"),
           ("heap_mb", "heap MB", "{:.0f}"), ("score", "score", "{:.3f}"), ("score_error", "±", "{:.3f}")]


def fmt(value: Any, pattern: str) -> str:
    return "" if value is None else pattern.format(value)


def cell_index(run: dict[str, Any]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    variants = {v["id"]: v["name"] for v in run["variants"]}
    scenarios = {s["id"]: s["name"] for s in run["scenarios"]}
    loads = {l["id"]: l["label"] for l in run["loads"]}
    return {(variants[c["variant_id"]], scenarios[c["scenario_id"]], loads[c["load_id"]], c["mode"]): c
            for c in run["cells"]}


def print_run(run: dict[str, Any], out: IO[str]) -> None:
    out.write(f"run {run['slug']}  project {run['project']}  status {run['status']}"
              f"{'' if run['is_valid'] else '  INVALID'}  tool {run['tool']}\n")
    out.write(f"agent {run['agent_version'] or '-'}  commit {run['commit'] or '-'}  branch {run['branch'] or '-'}"
              f"  environment {run['environment'] or '-'}\n")
    out.write(f"permalink {run['permalink']}\n")
    if run["status"] == "failed" and run.get("status_detail"):
        out.write(f"failed: {run['status_detail']}\n")
    cells = cell_index(run)
    used = [c for c in COLUMNS if any(cell.get(c[0]) is not None for cell in cells.values())]
    table = Table([(name, False) for name in ("variant", "scenario", "load", "mode")]
                  + [(title, True) for _, title, _ in used])
    for (variant, scenario, load, mode), cell in cells.items():
        table.add_row(variant, scenario, load, mode, *(fmt(cell.get(k), p) for k, _, p in used))
    table.write(out)
    criteria = run.get("criteria") or []
    if criteria:
        judged = Table([(name, name == "observed") for name in
                        ("criterion", "variant", "scenario", "load", "observed", "result")], title="pass/fail criteria")
        for c in criteria:
            result = {True: "pass", False: "FAIL"}.get(c.get("ok"), "-")
            judged.add_row(str(c.get("criterion")), c.get("variant") or "all", c.get("scenario") or "all",
                           c.get("load") or "-", fmt(c.get("observed"), "{:.4g}"), result)
        judged.write(out)
    for v in run.get("validity") or []:
        if v.get("ok") is False:
            what = "warning" if v.get("severity") == "warning" else "INVALID"
            out.write(f"validity {what}: {v.get('check')}: {v.get('detail')}\n")


def not_over_cells(ci_low: Optional[float], ci_high: Optional[float], p_adjusted: Optional[float], cells: int) -> str:
    """What to add to a verdict read among `cells` answered together: ", not significant over N cells
    (adjusted p X)" when its own interval excludes 0 but its adjusted p is not below the false discovery
    rate; else nothing (the server's benchtrail.multiplicity.not_over_cells, the dashboard's verdictText)."""
    if ci_low is None or ci_high is None or not (ci_low > 0 or ci_high < 0):
        return ""
    if p_adjusted is None or p_adjusted < FALSE_DISCOVERY_RATE:
        return ""
    return f", not significant over {cells} cell{'' if cells == 1 else 's'} (adjusted p {p_adjusted:.2g})"


def _num(value: Optional[float], signed: bool = False) -> str:
    """Four significant digits (a latency of 0.3012 ms and a throughput of 3412 req/s alike)."""
    return "" if value is None else f"{value:+.4g}" if signed else f"{value:.4g}"


def print_comparison(rows: list[dict[str, Any]], out: IO[str], title: Optional[str] = None, *,
                     one_family: bool = False) -> None:
    """`GET /compare` items (or a run's overheads shaped alike) as a table: a / b / b − a, Δ%, the 95%
    interval of the difference, the verdict and how it was reached (method, repetitions per side). A verdict
    whose `p_adjusted` is not below the false discovery rate says over how many cells it was adjusted: the
    rows of its metric (one answer of the server each), or every row with `one_family`."""
    table = Table([("variant", False), ("scenario", False), ("load", False), ("metric", False), ("a", True),
                   ("b", True), ("b − a", True), ("Δ%", True), ("95% interval", True), ("verdict", False),
                   ("method (n a+b)", False)], title=title)
    counted: dict[str, int] = {}
    for r in rows:
        if r.get("p_adjusted") is not None:
            family = "" if one_family else r["metric"]
            counted[family] = counted.get(family, 0) + 1
    for r in rows:
        res = r["result"]
        variant = r["a_variant"] if r["a_variant"] == r["b_variant"] else f"{r['a_variant']} → {r['b_variant']}"
        interval = ("" if res["ci_low"] is None or res["ci_high"] is None
                    else f"[{_num(res['ci_low'])}, {_num(res['ci_high'])}]")
        verdict = res["verdict"] + {True: " (worse)", False: " (better)"}.get(res["worse"], "")
        verdict += not_over_cells(res["ci_low"], res["ci_high"], r.get("p_adjusted"),
                                  counted.get("" if one_family else r["metric"], 0))
        table.add_row(variant, r["cell"]["scenario"], r["cell"]["load_label"], r["metric"], _num(res["reference"]),
                      _num(res["variant"]), _num(res["abs_diff"], signed=True),
                      "" if res["rel_diff"] is None else f"{res['rel_diff'] * 100:+.1f}%", interval, verdict,
                      f"{res['method']} ({res['n_ref']}+{res['n_var']})")
    table.write(out)


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
        print_comparison(rows, sys.stdout, title="overhead against the reference (variant − reference)")


class Progress:
    """One line on stderr, redrawn in place, only on a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.shown = False

    def show(self, text: str) -> None:
        if self.enabled:
            sys.stderr.write("\r" + text[:100].ljust(100))
            sys.stderr.flush()
            self.shown = True

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.shown = False


# ------------------------------------------------------------------------------------- statistics

def adjusted_p_values(p_values: Sequence[Optional[float]]) -> list[Optional[float]]:
    """Each p-value adjusted (Benjamini-Hochberg) over every finite one given; None stays None. The server
    adjusts the cells of one answer itself (scipy); the client adjusts only when its gate joins several
    answers (`compare --fail-on-worse` over several metrics), and has no scipy: p_(i) · m / i over the
    sorted p-values, then the running minimum from the largest, capped at 1."""
    known = sorted(((float(p), i) for i, p in enumerate(p_values) if p is not None and math.isfinite(p)),
                   reverse=True)
    out: list[Optional[float]] = [None] * len(p_values)
    m = len(known)
    running = 1.0
    for rank, (p, i) in zip(range(m, 0, -1), known):
        running = min(running, p * m / rank)
        out[i] = running
    return out


def failing_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The worse rows that fail `compare --fail-on-worse`: those whose adjusted p (`p_adjusted`, over every
    compared row of every metric asked) is under the false discovery rate, or that have none."""
    return [r for r in rows if r["result"]["worse"]
            and (r["p_adjusted"] is None or r["p_adjusted"] < FALSE_DISCOVERY_RATE)]


# ----------------------------------------------------------------------------------------- commands

def retrying_client(args: argparse.Namespace) -> Client:
    return Client(args.url, args.token, retry_timeout=max(0.0, args.retry_timeout),
                  on_wait=lambda message: say(f"waiting: {message}"))


def follow(client: Client, slug: str, timeout: float, show_progress: bool) -> dict[str, Any]:
    """Follow the run's server-sent events (a progress line for a plan run) until it settles; then the run
    itself. Seen the moment it changes: no polling delay."""
    deadline = time.monotonic() + timeout
    bar = Progress(show_progress)
    try:
        for event in client.events(slug):
            if event is None:   # a keep-alive
                if time.monotonic() > deadline:
                    break
                continue
            p = event.get("progress") or {}
            rate = f"  {p['achieved_rate']:.0f} req/s" if p.get("achieved_rate") else ""
            bar.show(f"{event['status']}: {p.get('step', '')}"[:60] + f"  {float(p.get('percent') or 0):5.1f}%{rate}")
            if settled(event["status"], event.get("analysis_status")) or time.monotonic() > deadline:
                break
    except TRANSPORT_ERRORS as exc:
        # The live stream broke (server restart, outage): poll instead, with the client's retries.
        bar.done()
        client.on_wait(f"progress stream lost ({describe(exc)}); polling the run instead")
    finally:
        bar.done()
    return client.wait_for_run(slug, max(1.0, deadline - time.monotonic()), until=_settled_run,
                               what="to end and be analysed")


def exit_on_failed_criteria(run: dict[str, Any]) -> None:
    failed = [c for c in run.get("criteria") or [] if c.get("ok") is False]
    for c in failed:
        where = " / ".join(str(x) for x in (c.get("variant"), c.get("scenario"), c.get("load")) if x)
        observed = c.get("observed")
        seen = f"{observed:.4g}" if isinstance(observed, (int, float)) else "nothing"
        say(f"criterion failed: {c['criterion']} ({where}): observed {seen}")
    if failed:
        raise Exit(EXIT_CRITERIA)


def cmd_upload(args: argparse.Namespace) -> None:
    criteria = [parse_criterion(c) for c in args.criterion]
    entries, paths = [], []
    for spec in args.variant:
        _, path, entry = parse_variant(spec)
        if args.format and "format" not in entry:
            entry["format"] = args.format
        entries.append(entry)
        paths.append(path)
    labels = {}
    for item in args.label:
        k, sep, v = item.partition("=")
        if not sep:
            fail(EXIT_USAGE, f"--label '{item}' must be key=value")
        labels[k] = v
    env = {k: v for k, v in dict(name=args.environment, cpus=args.cpus, memory_mb=args.memory_mb,
                                   instance_type=args.instance_type, os=args.os, runtime=args.runtime).items()
           if v is not None}
    metadata = {"files": entries, "labels": labels, "agent_version": args.agent_version,
                "app_version": args.app_version, "commit": args.commit, "branch": args.branch,
                "reference": args.reference, "environment": env or None,
                **({"criteria": criteria} if criteria else {})}
    client = retrying_client(args)
    key = args.idempotency_key or new_idempotency_key()
    total = sum(p.stat().st_size for p in paths)
    bar = Progress(not args.json and total > 5 * 1024 * 1024)
    sent = [0]

    def progress(n: int) -> None:
        sent[0] += n
        bar.show(f"uploading {sent[0] / 2**20:.1f} / {total / 2**20:.1f} MiB ({100 * sent[0] / total:.0f}%)")

    try:
        accepted = call(client.upload, args.project, json.dumps(metadata), paths, key,
                        progress if bar.enabled else None)
    finally:
        bar.done()
    files = accepted.get("files") or []
    if not args.json:
        for f in files:
            say(f"{f['filename']} ({f['variant']}): read as {f['format']} ({'detected' if f['detected'] else 'as given'})")
    if not args.wait:
        if args.json:
            print_json({"run": accepted["run"], "id": accepted["id"], "permalink": accepted["permalink"],
                        "status": accepted["status"], "files": files})
        else:
            print(f"run {accepted['run']} accepted ({accepted['status']}): {accepted['permalink']}")
        return
    run = call(follow, client, accepted["run"], args.wait_timeout, show_progress=False)
    alerts = run.get("alerts") or []
    if args.json:
        print_json({"run": run["slug"], "id": run["id"], "permalink": run["permalink"], "status": run["status"],
                    "status_detail": run.get("status_detail"), "is_valid": run["is_valid"],
                    "criteria": run.get("criteria"), "alerts": alerts, "files": files})
    else:
        print_run(run, sys.stdout)
        print_overheads(client, run)
    if run["status"] != "completed":
        fail(EXIT_INGEST_FAILED, f"run {run['slug']} {run['status']}: {run.get('status_detail')}")
    if args.fail_on_alert and run.get("analysis_status") == "failed":
        fail(EXIT_INGEST_FAILED, f"run {run['slug']}: analysis failed, cannot tell whether it raised an alert")
    if args.fail_on_alert and alerts:
        for a in alerts:
            say(f"alert: {a.get('summary', a)}  {a.get('permalink', run['permalink'])}")
        raise Exit(EXIT_ALERT)
    exit_on_failed_criteria(run)


def cmd_import(args: argparse.Namespace) -> None:
    """A history from another tool: one backdated run per entry, oldest first; entries imported before stay."""
    history = Path(args.history)
    if not history.is_file():
        fail(EXIT_USAGE, f"no such file '{history}'")
    metadata = {"variant": args.variant, **({"format": args.format} if args.format else {}),
                **({"environment": {"name": args.environment}} if args.environment else {}),
                **({"branch": args.branch} if args.branch else {})}
    client = retrying_client(args)
    result = call(client.post_files, f"/api/v1/projects/{urllib.parse.quote(args.project)}/imports",
                  json.dumps(metadata), [history])
    runs = result["runs"]
    if args.wait:
        deadline = time.monotonic() + args.wait_timeout
        for r in runs:
            r["status"] = call(client.wait_for_run, r["run"], max(1.0, deadline - time.monotonic()))["status"]
    if args.json:
        print_json(result)
    else:
        print(f"{history.name}: read as {result['format']}; {result['imported']} run(s) imported, "
              f"{result['already']} imported before")
        for r in runs:
            print(f"  {r['started_at'][:19]}  {(r['commit'] or '-')[:12]:<12}  {r['status']:<10} "
                  f"{r['permalink']}{'  (before)' if r['duplicate'] else ''}")
    failed = [r for r in runs if r["status"] == "failed"]
    if failed:
        fail(EXIT_INGEST_FAILED, f"{len(failed)} imported run(s) failed to ingest, e.g. {failed[0]['permalink']}")


def cmd_export(args: argparse.Namespace) -> None:
    """A run's results in another tool's format (BMF: what `bencher run --adapter json` reads)."""
    data = call(Client(args.url, args.token).get, f"/api/v1/runs/{urllib.parse.quote(args.run)}/bmf")
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        say(f"run {args.run}: {len(data)} benchmark(s) written to {args.output}")


def cmd_run(args: argparse.Namespace) -> None:
    plan_file = Path(args.plan_file)
    if not plan_file.is_file():
        fail(EXIT_USAGE, f"plan file '{plan_file}' does not exist")
    client = retrying_client(args)
    project = urllib.parse.quote(args.project)
    # Storing an unchanged plan stores nothing new, so this POST is safe to retry as it is.
    stored = call(lambda: client.check(client.request("POST", f"/api/v1/projects/{project}/plans",
                                                      content=plan_file.read_bytes(),
                                                      headers={"Content-Type": "application/yaml"})))
    started = call(client.post, f"/api/v1/projects/{project}/plans/{urllib.parse.quote(stored['name'])}/runs",
                   {"agent_version": args.agent_version, "commit": args.commit, "branch": args.branch},
                   headers={"Idempotency-Key": args.idempotency_key or new_idempotency_key()})
    slug = started["slug"]
    if not args.json:
        say(f"plan '{stored['name']}' v{stored['version']}: run {slug} queued on pool "
            f"'{stored['pool']}': {started['permalink']}")
    if not args.wait:
        if args.json:
            print_json({"run": slug, "id": started["id"], "permalink": started["permalink"],
                        "status": started["status"]})
        return
    run = call(follow, client, slug, args.wait_timeout, show_progress=not args.json)
    if args.json:
        print_json({"run": slug, "id": run["id"], "permalink": run["permalink"], "status": run["status"],
                    "status_detail": run.get("status_detail"), "is_valid": run["is_valid"],
                    "criteria": run.get("criteria")})
    else:
        print_run(run, sys.stdout)
        print_overheads(client, run)
    if run["status"] != "completed":
        fail(EXIT_INGEST_FAILED, f"run {slug} {run['status']}: {run.get('status_detail')}")
    exit_on_failed_criteria(run)


def cmd_show(args: argparse.Namespace) -> None:
    client = Client(args.url, args.token)
    data = call(client.get, f"/api/v1/runs/{urllib.parse.quote(args.run)}")
    if args.json:
        print_json(data)
    else:
        print_run(data, sys.stdout)
        print_overheads(client, data)


def cmd_runs_list(args: argparse.Namespace) -> None:
    data = call(Client(args.url, args.token).get, f"/api/v1/projects/{urllib.parse.quote(args.project)}/runs",
                branch=args.branch, agent_version=args.agent_version, environment=args.environment,
                per_page=args.per_page)
    if args.json:
        print_json(data)
        return
    for r in data["items"]:
        print(f"{r['slug']}  {r['created_at'][:19]}  {r['status']:<10} agent={r['agent_version'] or '-'} "
              f"branch={r['branch'] or '-'} commit={(r['commit'] or '-')[:12]}  {r['permalink']}")
    print(f"{len(data['items'])} of {data['total']} runs")


def cmd_compare(args: argparse.Namespace) -> None:
    client = Client(args.url, args.token)
    asked: list[Optional[str]] = list(args.metric) if args.metric else [None]   # None: the server's default per cell
    rows = [row for m in asked for row in call(
        client.get, "/api/v1/compare", a=args.run_a, b=args.run_b, metric=m, a_variant=args.a_variant,
        b_variant=args.b_variant)["items"]]
    if args.fail_on_worse and len(asked) > 1:
        # The server adjusts over the cells of one metric; the gate counts every metric asked too.
        for r, p in zip(rows, adjusted_p_values([r["result"].get("p_value") for r in rows])):
            r["p_adjusted"] = p
    if args.json:
        print_json({"a": args.run_a, "b": args.run_b, "items": rows})
    elif not rows:
        print("no cells in common (same variant, scenario, load and mode, and a value of the metric)")
    else:
        # Adjusted over one answer of the server (one metric, or each cell's default), or all rows by the gate.
        print_comparison(rows, sys.stdout, one_family=args.fail_on_worse or len(asked) == 1)
    if args.fail_on_worse:
        failing = failing_rows(rows)
        for r in (r for r in rows if r["result"]["worse"]):
            res = r["result"]
            rel = "" if res["rel_diff"] is None else f" ({res['rel_diff'] * 100:+.1f}%)"
            adjusted = "" if r["p_adjusted"] is None else f", adjusted p {r['p_adjusted']:.2g} over {len(rows)} comparisons"
            what = "worse" if r in failing else "not significant once every comparison is counted"
            say(f"{what}: {r['b_variant']} / {r['cell']['scenario']} / {r['cell']['load_label']}: "
                f"{r['metric']} {res['verdict']}{rel}{adjusted}")
        if failing:
            raise Exit(EXIT_ALERT)


def _print_exclusion(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(data)
    elif data["excluded"]:
        print(f"run {data['run']} excluded from its trails by {data['by']}: {data['reason']}")
    else:
        print(f"run {data['run']} is in its trails" if data["is_valid"] else
              f"run {data['run']} is not excluded, but stays out of its trails: a validity check failed "
              f"(benchtrail show {data['run']})")


def cmd_exclude(args: argparse.Namespace) -> None:
    _print_exclusion(call(Client(args.url, args.token).put, f"/api/v1/runs/{urllib.parse.quote(args.run)}/exclusion",
                          {"reason": args.reason}), args.json)


def cmd_restore(args: argparse.Namespace) -> None:
    _print_exclusion(call(Client(args.url, args.token).delete, f"/api/v1/runs/{urllib.parse.quote(args.run)}/exclusion"), args.json)


# ------------------------------------------------------------------------------------------- parser

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:   # usage errors exit 2, as documented
        self.print_usage(sys.stderr)
        fail(EXIT_USAGE, message)


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        fail(EXIT_USAGE, f"{name}={value!r} is not a number")


def _connection(p: argparse.ArgumentParser, retry: bool = False) -> None:
    p.add_argument("--url", default=os.environ.get("BENCHTRAIL_URL") or DEFAULT_URL,
                   help="API base URL (env BENCHTRAIL_URL; default %(default)s)")
    p.add_argument("--token", default=os.environ.get("BENCHTRAIL_TOKEN") or None,
                   help="API token, bt_... (env BENCHTRAIL_TOKEN); reads of public projects need none")
    if retry:
        p.add_argument("--retry-timeout", type=float, default=_env_float("BENCHTRAIL_RETRY_TIMEOUT", 300.0),
                       help="seconds to keep retrying while the server answers 503/429/502/504 or cannot be "
                            "reached (exponential backoff with jitter); 0 = no retries (env BENCHTRAIL_RETRY_TIMEOUT; "
                            "default %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON for machines")


def build_parser(prog: str = "benchtrail.py", epilog: Optional[str] = None) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Benchtrail: benchmark history for agents, gateways and services.",
                     epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    up = sub.add_parser("upload", help="upload result files as one run (one file or more per variant)",
                        description="Upload result files as one run (one file or more per variant).")
    up.add_argument("--project", required=True, help="project slug")
    up.add_argument("--variant", action="append", required=True, metavar="NAME=FILE[;key=value...]",
                    help="a result file of variant NAME; options after ';': scenario, format, warmup (s), "
                         "threads|concurrency|rate, requests, duration (s), started (ms since the epoch or ISO 8601 "
                         "with a zone); repeat")
    up.add_argument("--environment", help="environment name")
    up.add_argument("--cpus", type=float, help="environment: CPUs")
    up.add_argument("--memory-mb", type=int, help="environment: memory in MB")
    up.add_argument("--instance-type", help="environment: instance type")
    up.add_argument("--os", help="environment: operating system")
    up.add_argument("--runtime", help="environment: runtime (JVM, Go, ...)")
    up.add_argument("--agent-version", help="agent version under test")
    up.add_argument("--app-version", help="application version")
    up.add_argument("--commit", help="commit SHA")
    up.add_argument("--branch", help="branch")
    up.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="a label; repeat")
    up.add_argument("--reference", help="reference variant (default: the first)")
    up.add_argument("--format", help="force the format of every file")
    up.add_argument("--idempotency-key",
                    help="same key twice makes one run; default: a new key, reused by this command's retries")
    up.add_argument("--wait", action=argparse.BooleanOptionalAction, default=False,
                    help="wait until the run is measured and analysed, then print it")
    up.add_argument("--wait-timeout", type=float, default=600, help="seconds to wait with --wait (default %(default)s)")
    up.add_argument("--criterion", action="append", default=[], metavar="'METRIC OP VALUE[;...]'",
                    help="pass/fail criterion 'METRIC OP VALUE[;variant=V][;scenario=S][;overhead]', e.g. "
                         "'latency_p99 < 250' or 'latency_p75 < 0.1;overhead' (variant minus reference); repeat. "
                         "With --wait a failed one exits 7")
    up.add_argument("--fail-on-alert", action=argparse.BooleanOptionalAction, default=False,
                    help="with --wait: exit 5 when the run raised an alert")
    _connection(up, retry=True)
    up.set_defaults(fn=cmd_upload)

    imp = sub.add_parser("import", help="import another tool's history as backdated runs, oldest first",
                         description="Import a history from another tool: one backdated run per entry, oldest "
                                     "first, so trails and the change-point detector see the past. Entries imported "
                                     "before are left as they are.")
    imp.add_argument("history", metavar="FILE", help="github-action-benchmark data.js (or its JSON), or Bencher "
                                                     "reports (JSON array of GET /v0/projects/{project}/reports)")
    imp.add_argument("--project", required=True, help="project slug")
    imp.add_argument("--format", help="gab-history or bencher-reports (default: detected)")
    imp.add_argument("--variant", default="baseline", help="variant of every imported run (default %(default)s)")
    imp.add_argument("--environment", help="environment name (default: a Bencher report's testbed)")
    imp.add_argument("--branch", help="branch (default: a Bencher report's branch)")
    imp.add_argument("--wait", action=argparse.BooleanOptionalAction, default=False,
                     help="wait until every imported run is ingested")
    imp.add_argument("--wait-timeout", type=float, default=1800, help="seconds to wait with --wait (default %(default)s)")
    _connection(imp, retry=True)
    imp.set_defaults(fn=cmd_import)

    exp = sub.add_parser("export", help="export a run's results in another tool's format (BMF)",
                         description="Export a run's results in another tool's format (BMF: what "
                                     "`bencher run --adapter json` reads).")
    exp.add_argument("run", metavar="RUN", help="run slug")
    exp.add_argument("--format", default="bmf", choices=["bmf"], help="bmf: Bencher Metric Format JSON")
    exp.add_argument("--output", "-o", help="file to write (default: stdout)")
    _connection(exp)
    exp.set_defaults(fn=cmd_export)

    run = sub.add_parser("run", help="store a plan and run it on its runner pool",
                         description="Store a plan (a new version if it changed) and run it on its runner pool.")
    run.add_argument("plan_file", metavar="PLAN", help="plan (YAML or JSON)")
    run.add_argument("--project", required=True, help="project slug")
    run.add_argument("--agent-version", help="agent version under test")
    run.add_argument("--commit", help="commit SHA")
    run.add_argument("--branch", help="branch")
    run.add_argument("--wait", action=argparse.BooleanOptionalAction, default=False,
                     help="follow progress until the run ends, then print it")
    run.add_argument("--wait-timeout", type=float, default=6 * 3600, help="seconds to wait with --wait (default %(default)s)")
    run.add_argument("--idempotency-key",
                     help="same key twice starts one run; default: a new key, reused by this command's retries")
    _connection(run, retry=True)
    run.set_defaults(fn=cmd_run)

    show = sub.add_parser("show", help="show a run with every cell", description="Show a run with every cell, its "
                          "criteria, failed validity checks and each variant against the reference.")
    show.add_argument("run", metavar="RUN", help="run slug")
    _connection(show)
    show.set_defaults(fn=cmd_show)

    runs = sub.add_parser("runs", help="list runs", description="List runs.")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="COMMAND", parser_class=_Parser)
    runs_sub.required = True
    listing = runs_sub.add_parser("list", help="a project's runs, newest first",
                                  description="List a project's runs, newest first.")
    listing.add_argument("--project", required=True, help="project slug")
    listing.add_argument("--branch", help="only runs of this branch")
    listing.add_argument("--agent-version", help="only runs of this agent version")
    listing.add_argument("--environment", help="only runs of this environment (its fingerprint)")
    listing.add_argument("--per-page", type=int, default=50, help="runs per page (default %(default)s)")
    _connection(listing)
    listing.set_defaults(fn=cmd_runs_list)

    cmp = sub.add_parser("compare", help="compare two runs cell by cell (b − a)",
                         description="Compare two runs cell by cell (b − a) with the server's statistics: per cell "
                                     "the difference, its 95%% interval over the repetitions and the verdict.")
    cmp.add_argument("run_a", metavar="RUN_A", help="the earlier run (slug)")
    cmp.add_argument("run_b", metavar="RUN_B", help="the run compared with it (slug)")
    cmp.add_argument("--metric", action="append", default=None,
                     help="metric to compare (repeat for several), e.g. latency_p99, throughput, error_rate; default: "
                          "per cell the first of latency_p75, score, throughput it has")
    cmp.add_argument("--a-variant", help="compare this variant of run a ...")
    cmp.add_argument("--b-variant", help="... with this variant of run b (default: same names)")
    cmp.add_argument("--fail-on-worse", action=argparse.BooleanOptionalAction, default=False,
                     help="exit 5 when a cell of run b is worse: its 95%% interval lies on the worse side of zero, the "
                          "change is 1%% or more, and it stays significant with the false discovery rate over every "
                          "compared cell and metric held at 5%% (Benjamini-Hochberg adjusted p < 0.05)")
    _connection(cmp)
    cmp.set_defaults(fn=cmd_compare)

    exc = sub.add_parser("exclude", help="exclude a completed run from its trails (uploader token)",
                         description="Exclude a completed run from its trails (uploader token): its points leave "
                                     "them and it never alerts; it stays, marked invalid with the reason. "
                                     "`restore` undoes it.")
    exc.add_argument("run", metavar="RUN", help="run slug")
    exc.add_argument("--reason", required=True, help="why the run does not measure what its trails track")
    _connection(exc)
    exc.set_defaults(fn=cmd_exclude)

    res = sub.add_parser("restore", help="put an excluded run back in its trails (uploader token)",
                         description="Put an excluded run back in its trails (uploader token); its own checks "
                                     "decide its validity again.")
    res.add_argument("run", metavar="RUN", help="run slug")
    _connection(res)
    res.set_defaults(fn=cmd_restore)
    return parser


def main(argv: Optional[Sequence[str]] = None, prog: str = "benchtrail.py", epilog: Optional[str] = None) -> int:
    """Run one command; its exit code (see the module's docstring)."""
    for stream in (sys.stdout, sys.stderr):
        # Tables use a few non-ASCII signs (−, Δ, →): never fail on a terminal or log that cannot show them.
        if hasattr(stream, "reconfigure") and (stream.encoding or "").lower().replace("-", "") != "utf8":
            stream.reconfigure(errors="backslashreplace")
    try:
        args = build_parser(prog, epilog).parse_args(argv)
        args.fn(args)
        return EXIT_OK
    except Exit as exc:
        return exc.code
    except KeyboardInterrupt:
        say("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())

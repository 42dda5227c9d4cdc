"""`runs.execute` on a runner: claim the run, run the plan with the real tools, report progress
(which is also the heartbeat and the cancel channel), upload the raw outputs through the API.

The heartbeat runs for the whole time the runner owns the run, packaging and upload included. The
outputs are compressed and sent with retries and one Idempotency-Key (runner/delivery.py); the work
directory is removed only once the API acknowledged them, and kept (with an error log line naming it
and the re-send command) when it never did.

A load test is never retried automatically (max_retries=0); the claim is a state guard on the run,
so a redelivered message for a run that already started does nothing."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .app import app
from .client import ApiError, Client
from . import delivery
from .config import get_settings
from .execute import execute_plan
from .logs import log
from .plan import PlanError, parse_plan, share_plan, steps
from .process import ToolError
from .report import results_upload
from .targets import disallowed_targets
from .tools import Progress

REPORT_INTERVAL_S = 1.0
LOG_KEEP = 200  # log lines held while the API is unreachable
LONGEST_RUN_S = 6 * 3600


class Reporter:
    """Sends the latest progress every second from a background thread, so the API always has a
    recent heartbeat, and learns from each answer whether the run was cancelled."""

    def __init__(self, api: Client, slug: str, steps_total: int, share: int | None = None) -> None:
        self.api, self.slug, self.steps_total = api, slug, steps_total
        self.query = f"?share={share}" if share is not None else ""
        self.cancelled = threading.Event()
        self.start_at: datetime | None = None   # the shares' common start instant, once the API set it
        self.step_starts: dict[int, datetime] = {}   # later steps' common start instants
        self._send_lock = threading.Lock()
        self._latest: dict[str, Any] = {}
        self._log: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"reporter-{slug}", daemon=True)

    def __enter__(self) -> "Reporter":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._send()

    def progress(self, p: Progress) -> None:
        with self._lock:
            overall = None
            if p.percent is not None and self.steps_total:
                overall = min(100.0, 100.0 * (p.step + p.percent / 100.0) / self.steps_total)
            if self._latest.get("step") != p.step_name:
                self._log.append(f"step {p.step + 1}/{self.steps_total}: {p.step_name}")
            self._latest = {"step": p.step_name, "step_index": p.step, "steps_total": self.steps_total,
                            "percent": overall, "achieved_rate": p.achieved_rate, "errors": p.errors,
                            "requests": p.requests}

    def note(self, line: str) -> None:
        with self._lock:
            self._log.append(line)

    def _send(self) -> None:
        with self._send_lock:
            self._send_locked()

    def _send_locked(self) -> None:
        with self._lock:
            body = {k: v for k, v in self._latest.items() if v is not None}
            body["log"], self._log = self._log, []
        try:
            ack = self.api.post(f"/api/v1/runs/{self.slug}/progress{self.query}", body)
            if ack.get("cancel_requested"):
                self.cancelled.set()
            if ack.get("start_at") and self.start_at is None:
                self.start_at = datetime.fromisoformat(ack["start_at"])
            if ack.get("step_start_at") and body.get("ready_step") is not None:
                self.step_starts[int(body["ready_step"])] = datetime.fromisoformat(ack["step_start_at"])
        except Exception as exc:  # the API may be restarting; the next report retries
            with self._lock:  # ...with these log lines too
                self._log[:0] = body["log"]
                del self._log[:-LOG_KEEP]
            log.warning("progress report failed", run=self.slug, error=str(exc))

    def _loop(self) -> None:
        while not self._stop.wait(REPORT_INTERVAL_S):
            self._send()

    def wait_for_start(self, start_at: datetime | None) -> bool:
        """The start barrier of a run over several generators: wait (heartbeating) until the API names
        the common start instant (once every share is claimed), then until that instant. False when
        the run was cancelled or failed meanwhile (e.g. a share was never claimed)."""
        self.start_at = self.start_at or start_at
        while self.start_at is None:
            if self.cancelled.wait(0.2):
                return False
        delay = (self.start_at - datetime.now(timezone.utc)).total_seconds()
        return not self.cancelled.wait(max(0.0, delay))

    def wait_for_step(self, index: int) -> None:
        """The barrier of a later step: report ready for it, then wait (heartbeating) for the step's
        common start instant and until it. Cancellation (or the run failing) ends the wait; the step
        then sees the cancel and stops at once."""
        with self._lock:
            self._latest["ready_step"] = index
        self._send()
        while index not in self.step_starts:  # the reporter's thread keeps sending `ready_step` every second
            if self.cancelled.wait(0.1):
                return
        with self._lock:
            self._latest.pop("ready_step", None)
        delay = (self.step_starts[index] - datetime.now(timezone.utc)).total_seconds()
        self.cancelled.wait(max(0.0, delay))


def _client() -> Client:
    settings = get_settings()
    return Client(settings.api_url, settings.token, timeout=600)


# A load test is never retried by Celery (max_retries=0); the queue is the pool's, chosen by the sender.
@app.task(name="runs.execute", bind=True, max_retries=0, acks_late=True,
          soft_time_limit=LONGEST_RUN_S, time_limit=LONGEST_RUN_S + 60)
def execute(self: Any, slug: str, plan_body: dict[str, Any], share: int | None = None) -> str:
    settings = get_settings()
    api = _client()
    query = f"?share={share}" if share is not None else ""
    try:
        claimed = api.post(f"/api/v1/runs/{slug}/claim", {}, params={
            "runner": settings.name, "host": socket.gethostname()[:200],
            **({"share": share} if share is not None else {})})
    except ApiError as exc:
        if exc.status == 409 and exc.body.get("code") == "same_runner":
            # This runner already runs another share of the run: hand this one back to the pool.
            execute.apply_async(args=[slug, plan_body], kwargs={"share": share},
                                queue=f"runner.{plan_body.get('pool', 'default')}", countdown=1)
            log.info("share handed back: this runner runs another share of the run", run=slug, share=share)
            return "handed back"
        if exc.status == 409:
            log.info("run not claimable, skipped", run=slug, detail=exc.body.get("detail"))
            return "skipped"
        raise

    def finish(status: str, reason: str) -> str:
        api.post(f"/api/v1/runs/{slug}/finish{query}", {"status": status, "reason": reason})
        log.info("run finished", run=slug, status=status, reason=reason)
        return status

    # The queued plan body shows request headers as "***"; their values come with the claim only.
    secrets = (claimed or {}).get("headers", {})
    plan_body = {**plan_body, "scenarios": [
        {**s, "headers": {**s.get("headers", {}), **secrets[s["name"]]}} if s.get("name") in secrets else s
        for s in plan_body.get("scenarios", [])]}
    try:
        whole = parse_plan(plan_body)
        plan = share_plan(whole, share or 0)
    except PlanError as exc:
        return finish("failed", f"invalid plan: {exc}")
    # A Go profile is fetched from its own URL: the allow-list holds for it as for the targets.
    bad = disallowed_targets([v.target for v in plan.variants] +
                             [v.profile.url for v in plan.variants if v.profile is not None and v.profile.url],
                             settings.target_patterns)
    if bad:
        return finish("failed", f"targets not in this runner's allow-list: {', '.join(bad)}")

    base = settings.work_dir
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"run-{slug}-", dir=base))
    keep = False
    try:
        # The reporter (heartbeat) runs for as long as this runner owns the run: through packaging and
        # the upload too, however long the retries take, so the sweeper never takes it for dead.
        with Reporter(api, slug, len(steps(plan)), share) as reporter:
            if share is not None:
                reporter.note(f"share {share + 1} of {whole.generators}: waiting for every share to be claimed")
                start_at = claimed.get("start_at") if claimed else None
                if not reporter.wait_for_start(datetime.fromisoformat(start_at) if start_at else None):
                    return finish("cancelled", "stopped before the common start: the run was cancelled or failed")
                reporter.note(f"share {share + 1} of {whole.generators}: starting at the common instant "
                              f"{reporter.start_at.isoformat() if reporter.start_at else ''}")
            try:
                # A share starts each later step together with the other shares (step 0: the start barrier).
                before = (lambda st: reporter.wait_for_step(st.index) if st.index > 0 else None) \
                    if share is not None else None
                result = execute_plan(plan, workdir, cancel=reporter.cancelled.is_set, progress=reporter.progress,
                                      before_step=before)
            except ToolError as exc:
                if getattr(exc, "cancelled", False) or reporter.cancelled.is_set():
                    return finish("cancelled", "cancelled while running; the tools were stopped and nothing "
                                               "was ingested")
                return finish("failed", f"load tool failed: {exc}")
            if reporter.cancelled.is_set():
                return finish("cancelled", "cancelled; nothing was ingested")
            meta, paths = results_upload(result, workdir, whole)
            if not paths:
                return finish("failed", "the plan produced no output files")
            # From here on the load test is finished: it is delivered or kept, never dropped.
            keep = True
            pkg = delivery.package(slug, meta, paths, workdir / "upload", share)
            reporter.note(f"uploading {len(pkg.files)} raw output(s): {pkg.packed_bytes / 2**20:.1f} MB "
                          f"zstd-compressed from {pkg.raw_bytes / 2**20:.1f} MB")
            try:
                ack = delivery.send(pkg, settings.api_url, settings.token, settings.upload_retry_s,
                                    on_wait=lambda m: (reporter.note(f"upload: {m}"),
                                                       log.warning("results upload retry", run=slug, why=m)),
                                    chunk_bytes=settings.upload_chunk_bytes)
            except delivery.NotDelivered as exc:
                log.error("results not delivered; the work directory is kept for an operator to re-send",
                          run=slug, directory=str(pkg.directory), why=exc.why,
                          resend=f"python -m benchtrail_runner.delivery {pkg.directory}")
                try:
                    finish("failed", f"results upload failed ({exc.why}); the outputs are kept on runner "
                                     f"'{settings.name}' in {pkg.directory}")
                except Exception as finish_exc:  # the API is still unreachable; the sweeper will fail it
                    log.warning("could not report the failed upload", run=slug, error=str(finish_exc))
                return "undelivered"
            keep = False
            log.info("results delivered", run=slug, duplicate=ack.get("duplicate", False),
                     packed_bytes=pkg.packed_bytes, raw_bytes=pkg.raw_bytes)
        return "uploaded"
    except Exception as exc:
        if keep:
            log.error("runner error after the load test finished; the work directory is kept",
                      run=slug, directory=str(workdir))
        finish("failed", f"runner error: {type(exc).__name__}: {exc}")
        raise
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)

"""Shares of a plan run over several load generators (plan `generators: N`).

The run is split into N shares, queued as N `runs.execute` messages on the pool's queue. Each share is
claimed once by one runner (the claim is a state guard on the share's row, under the run's row lock,
as a run's own claim is), and no runner claims two shares of one run. When the last share is claimed
the run gets one start instant `START_DELAY_S` ahead (`RunMeta.start_at`), which every share's runner
reads from its claim or heartbeat answer and waits for: the start barrier. Each later step has its own
barrier (`arm_step`): a share reports `ready_step`, and once every share is ready the step gets one
instant `STEP_DELAY_S` ahead, so step k of every share runs at the same time and merges as one.

The run's `heartbeat_at` is the oldest heartbeat of its live shares (a share not claimed yet counts
from the first claim), so the sweeper fails the run when any share goes silent, and names the share.
A share that fails fails the run; the run is ingested once every share has delivered its outputs.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.models import Run, RunShare
from benchtrail.runstate import meta as run_meta

START_DELAY_S = 3.0
STEP_DELAY_S = 2.0
LIVE = ("queued", "running")


def create(session: Session, run: Run, generators: int) -> None:
    session.add_all([RunShare(run_id=run.id, index=i, status="queued") for i in range(generators)])


def of_run(session: Session, run_id: int) -> list[RunShare]:
    return list(session.scalars(select(RunShare).where(RunShare.run_id == run_id).order_by(RunShare.index)))


def of_runs(session: Session, run_ids: list[int]) -> dict[int, list[RunShare]]:
    out: dict[int, list[RunShare]] = {}
    if run_ids:
        for row in session.scalars(select(RunShare).where(RunShare.run_id.in_(run_ids))
                                   .order_by(RunShare.run_id, RunShare.index)):
            out.setdefault(row.run_id, []).append(row)
    return out


def name(share: RunShare, total: int) -> str:
    who = f" (runner '{share.runner}' on host '{share.host}')" if share.runner else ""
    return f"share {share.index + 1} of {total}{who}"


def refresh_heartbeat(run: Run, shares: list[RunShare]) -> None:
    """The run's heartbeat: the oldest of its live shares' (an unclaimed share counts from the start)."""
    beats = [s.heartbeat_at or run.started_at for s in shares if s.status in LIVE]
    beats = [b for b in beats if b is not None]
    if beats:
        run.heartbeat_at = min(beats)


def arm_barrier(run: Run, shares: list[RunShare], now: datetime) -> None:
    """Once every share is claimed, the common start instant, a few seconds ahead."""
    if all(s.status != "queued" for s in shares) and run_meta.of(run).start_at is None:
        run_meta.update(run, start_at=(now + timedelta(seconds=START_DELAY_S)).isoformat())


def arm_step(run: Run, shares: list[RunShare], ready: dict[str, dict[str, object]], step: int,
             now: datetime) -> None:
    """Once every share is ready for `step` (its report's `ready_step`), that step's common start
    instant, `STEP_DELAY_S` ahead: every step of the shares starts together, not only the first."""
    starts = run_meta.of(run).step_starts
    if str(step) in starts:
        return
    steps = [ready.get(str(s.index), {}).get("ready_step") for s in shares if s.status in LIVE]
    if steps and all(isinstance(k, int) and k >= step for k in steps):
        run_meta.update(run, step_starts={**starts, str(step): (now + timedelta(seconds=STEP_DELAY_S)).isoformat()})


def step_start(run: Run, step: int | None) -> datetime | None:
    value = run_meta.of(run).step_starts.get(str(step)) if step is not None else None
    return datetime.fromisoformat(value) if value else None


def silent(run: Run, shares: list[RunShare], before: datetime, timeout_s: int, pool: str) -> str:
    """Why a run whose heartbeat is older than `before` is failed: the shares that went silent (marked
    failed), each named."""
    now = datetime.now(timezone.utc)
    reasons = []
    for s in shares:
        if s.status == "queued" and (run.started_at is None or run.started_at < before):
            s.status, s.finished_at = "failed", now
            s.reason = f"not claimed by a runner of pool '{pool}' within {timeout_s} s"
        elif s.status == "running" and (s.heartbeat_at is None or s.heartbeat_at < before):
            s.status, s.finished_at = "failed", now
            s.reason = f"the runner stopped reporting (no heartbeat for {timeout_s} s)"
        else:
            continue
        reasons.append(f"{name(s, len(shares))}: {s.reason}")
    if not reasons:
        reasons.append(f"a share of the run stopped reporting (no heartbeat for {timeout_s} s)")
    return "; ".join(reasons) + "; the load test was not restarted"


def stop_live(shares: list[RunShare], status: str, reason: str) -> None:
    now = datetime.now(timezone.utc)
    for s in shares:
        if s.status in LIVE:
            s.status, s.reason, s.finished_at = status, reason, now

"""The run lifecycle: one transition function, and a database that refuses what it refuses."""

from __future__ import annotations

import itertools
import uuid

import pytest
from sqlalchemy import select, text, update
from sqlalchemy.exc import IntegrityError

from benchtrail.db_boundary import unit_of_work
from benchtrail.models import Project, Run
from benchtrail.runstate import lifecycle
from benchtrail.runstate.lifecycle import AnalysisStatus, IllegalTransition, RunStatus

# Written out by hand from the design (queued → running → ingesting → completed, or failed/cancelled),
# not read from the code under test.
EXPECTED_RUN_MOVES = {
    ("queued", "running"), ("queued", "failed"), ("queued", "cancelled"),
    ("running", "ingesting"), ("running", "failed"), ("running", "cancelled"),
    ("ingesting", "completed"), ("ingesting", "failed"),
    ("failed", "ingesting"),  # late results from the run's own runner (migration 0014)
}
EXPECTED_ANALYSIS_MOVES = {("pending", "done"), ("pending", "failed"), ("failed", "done"), ("done", "done"),
                           ("done", "pending"), ("failed", "pending")}
RUN_STATES = ["queued", "running", "ingesting", "completed", "failed", "cancelled"]
ANALYSIS_STATES = ["pending", "done", "failed"]


def _new_run(session, status: str, analysis_status: str = "pending") -> Run:  # type: ignore[no-untyped-def]
    project = session.scalar(select(Project).where(Project.slug == "lifecycle"))
    if project is None:
        project = Project(slug="lifecycle", name="lifecycle", description="", is_public=True, settings={})
        session.add(project)
        session.flush()
    run = Run(slug=uuid.uuid4().hex[:12], project_id=project.id, source="upload", status=status,
              analysis_status=analysis_status, labels={}, meta={}, validity=[], criteria=[], progress={})
    session.add(run)
    session.flush()
    return run


def test_transition_function_allows_exactly_the_lifecycle():
    for a, b in itertools.product(RUN_STATES, RUN_STATES):
        run = Run(slug="x", status=a)
        if (a, b) in EXPECTED_RUN_MOVES:
            lifecycle.transition(run, RunStatus(b))
            assert run.status == b
            assert (run.finished_at is not None) == (b in ("completed", "failed", "cancelled"))
        else:
            with pytest.raises(IllegalTransition):
                lifecycle.transition(run, RunStatus(b))
            assert run.status == a
    for a, b in itertools.product(ANALYSIS_STATES, ANALYSIS_STATES):
        run = Run(slug="x", status="completed", analysis_status=a)
        if (a, b) in EXPECTED_ANALYSIS_MOVES:
            lifecycle.analysis_transition(run, AnalysisStatus(b))
        else:
            with pytest.raises(IllegalTransition):
                lifecycle.analysis_transition(run, AnalysisStatus(b))


def test_database_refuses_illegal_transitions_and_unknown_values(infra):
    """Every pair of states, written straight to the database (bypassing the transition function)."""
    for a, b in itertools.product(RUN_STATES, RUN_STATES):
        if a == b:
            continue
        ok = (a, b) in EXPECTED_RUN_MOVES
        try:
            with unit_of_work() as session:
                run = _new_run(session, a)
                session.execute(update(Run).where(Run.id == run.id).values(status=b))
            assert ok, f"the database let a run go from {a} to {b}"
        except IntegrityError as exc:
            assert not ok, f"the database refused the legal move {a} -> {b}: {exc}"
            assert "cannot go from" in str(exc.orig)
    for a, b in itertools.product(ANALYSIS_STATES, ANALYSIS_STATES):
        if a == b:
            continue
        ok = (a, b) in EXPECTED_ANALYSIS_MOVES
        try:
            with unit_of_work() as session:
                run = _new_run(session, "completed", a)
                session.execute(update(Run).where(Run.id == run.id).values(analysis_status=b))
            assert ok, f"the database let an analysis go from {a} to {b}"
        except IntegrityError:
            assert not ok, f"the database refused the legal analysis move {a} -> {b}"

    # Values outside the enums are refused by the check constraints, on insert and on update.
    with pytest.raises(IntegrityError, match="ck_runs_status"):
        with unit_of_work() as session:
            _new_run(session, "analysing")
    with pytest.raises(IntegrityError, match="ck_runs_analysis_status"):
        with unit_of_work() as session:
            _new_run(session, "completed", "analysing")
    with pytest.raises(IntegrityError):
        with unit_of_work() as session:
            run = _new_run(session, "queued")
            session.execute(text("UPDATE runs SET status = 'done' WHERE id = :id"), {"id": run.id})


def test_completed_run_cannot_be_reopened_through_the_api_paths(infra):
    """A terminal run stays terminal: the transition function refuses, and so does the database."""
    with unit_of_work() as session:
        run = _new_run(session, "ingesting")
        lifecycle.transition(run, RunStatus.COMPLETED)
        run_id = run.id
    with unit_of_work() as session:
        run = session.get(Run, run_id)
        with pytest.raises(IllegalTransition, match="from completed to ingesting"):
            lifecycle.transition(run, RunStatus.INGESTING)
    with pytest.raises(IntegrityError, match="cannot go from completed to ingesting"):
        with unit_of_work() as session:
            session.execute(update(Run).where(Run.id == run_id).values(status="ingesting"))
    with unit_of_work() as session:
        assert session.get(Run, run_id).status == "completed"

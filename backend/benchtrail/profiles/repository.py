from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from benchtrail.models import Cell, Load, Profile, Run, RunFile, Scenario, Variant


def of_run(session: Session, run_id: int) -> list[tuple[Profile, str, str, str]]:
    """(profile, variant, scenario, load key) of the run, in execution order."""
    rows = session.execute(
        select(Profile, Variant.name, Scenario.name, Load.key)
        .join(Variant, Variant.id == Profile.variant_id).join(Scenario, Scenario.id == Profile.scenario_id)
        .join(Load, Load.id == Profile.load_id).where(Profile.run_id == run_id)
        .order_by(Profile.step, Variant.position))
    return list(rows)


def files(session: Session, run_id: int, ids: set[int]) -> dict[int, RunFile]:
    if not ids:
        return {}
    return {f.id: f for f in session.scalars(select(RunFile).where(RunFile.run_id == run_id, RunFile.id.in_(ids)))}


def resource_cell(session: Session, run_id: int, variant: str, scenario: str, load_key: str) -> Cell | None:
    """The variant's resource cell at the load level (the all-scenarios cell the runner's sampling writes)."""
    return session.scalar(
        select(Cell).join(Variant, Variant.id == Cell.variant_id).join(Scenario, Scenario.id == Cell.scenario_id)
        .join(Load, Load.id == Cell.load_id)
        .where(Cell.run_id == run_id, Variant.name == variant, Scenario.name == scenario, Load.key == load_key,
               Cell.process == "", Cell.cpu_s_per_1k.is_not(None)))


def reference_variant(session: Session, run_id: int) -> str | None:
    return session.scalar(select(Variant.name).where(Variant.run_id == run_id, Variant.is_reference))


def previous_profiled_run(session: Session, run: Run, variant: str, load_key: str) -> str | None:
    """The slug of the project's latest completed run before `run` (same environment) with a profile of
    `variant` at `load_key`: the other side of a change point."""
    return session.scalar(
        select(Run.slug).join(Profile, Profile.run_id == Run.id).join(Variant, Variant.id == Profile.variant_id)
        .join(Load, Load.id == Profile.load_id)
        .where(Run.project_id == run.project_id, Run.id != run.id, Run.status == "completed",
               Run.environment_id.is_not_distinct_from(run.environment_id),
               (Run.created_at < run.created_at) | ((Run.created_at == run.created_at) & (Run.id < run.id)),
               Variant.name == variant, Load.key == load_key)
        .order_by(Run.created_at.desc(), Run.id.desc()).limit(1))


def sample_cells(session: Session, run_id: int) -> list[tuple[Cell, str, str, str]]:
    """(cell, variant, scenario, load key) of the run's sample-based cells (not the resource cells)."""
    rows = session.execute(
        select(Cell, Variant.name, Scenario.name, Load.key).join(Variant, Variant.id == Cell.variant_id)
        .join(Scenario, Scenario.id == Cell.scenario_id).join(Load, Load.id == Cell.load_id)
        .where(Cell.run_id == run_id, Cell.source == "samples", Cell.process == "", Cell.is_transaction.is_(False)))
    return list(rows)


def file_starts(session: Session, run_id: int) -> dict[int, int]:
    """Each run file's position -> the `started_ms` of its step (runner files carry it)."""
    out = {}
    for position, options in session.execute(select(RunFile.position, RunFile.options).where(RunFile.run_id == run_id)):
        started = (options or {}).get("started_ms")
        if started is not None:
            out[int(position)] = int(started)
    return out

"""Every query of ingest: the run it writes (locked), its files, and the trails its cells extend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from benchtrail.models import Blob, Cell, Environment, Load, Project, Run, RunFile, Scenario, Trail, Variant
from benchtrail.runstate.lifecycle import RunStatus


def lock_run(session: Session, run_id: int) -> Run | None:
    """The run, row-locked for the ingest transaction (one ingest of a run at a time)."""
    return session.scalar(select(Run).where(Run.id == run_id).with_for_update())


def environment(session: Session, environment_id: int | None) -> Environment | None:
    return session.get(Environment, environment_id) if environment_id else None


def project(session: Session, project_id: int) -> Project | None:
    return session.get(Project, project_id)


def files_with_blobs(session: Session, run_id: int) -> Sequence[Any]:
    """(RunFile, Blob) rows of the run in file order."""
    return session.execute(select(RunFile, Blob).join(Blob, Blob.id == RunFile.blob_id)
                           .where(RunFile.run_id == run_id).order_by(RunFile.position)).all()


def trail_ids(session: Session, rows: list[dict[str, Any]]) -> dict[str, int]:
    """Create the trails that do not exist yet (rows of Trail columns, `hash` unique); hash -> id."""
    if not rows:
        return {}
    session.execute(insert(Trail).values(rows).on_conflict_do_nothing(index_elements=["hash"]))
    found = session.execute(select(Trail.id, Trail.hash).where(Trail.hash.in_([r["hash"] for r in rows])))
    return {h: tid for tid, h in found}


def count_cells(session: Session, run_id: int) -> int:
    return session.scalar(select(func.count()).select_from(Cell).where(Cell.run_id == run_id)) or 0


def delete_measurements(session: Session, run_id: int) -> None:
    """The run's variants, scenarios and loads; the database deletes their cells, series and the cells'
    overheads with them (ON DELETE CASCADE)."""
    for table in (Variant, Scenario, Load):
        session.execute(delete(table).where(table.run_id == run_id))


def runs_by_slug(session: Session, slugs: list[str]) -> list[tuple[str, int]]:
    """(slug, id) of these runs, oldest first."""
    return list(session.execute(select(Run.slug, Run.id).where(Run.slug.in_(slugs))
                                .order_by(Run.created_at, Run.id)).tuples())


def completed_runs(session: Session, project_ids: list[int] | None) -> list[tuple[str, int]]:
    """(slug, id) of the completed runs of these projects (None: of every project), oldest first."""
    query = select(Run.slug, Run.id).where(Run.status == RunStatus.COMPLETED)
    if project_ids is not None:
        query = query.where(Run.project_id.in_(project_ids))
    return list(session.execute(query.order_by(Run.created_at, Run.id)).tuples())

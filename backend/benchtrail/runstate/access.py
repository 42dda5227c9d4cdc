"""Who may see or change a run: a token that sees its project, or the runner token that claimed it."""

from __future__ import annotations

from sqlalchemy.orm import Session

from benchtrail.auth.principal import Principal
from benchtrail.errors import NotFound
from benchtrail.models import Project, Run
from benchtrail.runstate import meta as run_meta
from benchtrail.runstate import repository


def by_slug(session: Session, slug: str) -> Run | None:
    return repository.get_by_slug(session, slug)


def lock(session: Session, run_id: int) -> Run | None:
    return repository.lock(session, run_id)


def executes(principal: Principal, run: Run) -> bool:
    """A runner token reads the runs it claimed (even on a private project), and nothing else."""
    return principal.is_runner and run_meta.of(run).runner_token_id == principal.token_id


def get_visible_run(session: Session, principal: Principal, slug: str) -> tuple[Run, Project]:
    run = repository.get_by_slug(session, slug)
    if run is None:
        raise NotFound(f"run '{slug}' not found")
    project = session.get(Project, run.project_id)
    assert project is not None
    if not principal.can_see(project) and not executes(principal, run):
        raise NotFound(f"run '{slug}' not found")
    return run, project


def locked_run(session: Session, principal: Principal, slug: str, role: str) -> Run:
    """The run, for a change that needs `role` on its project, row-locked with its committed values."""
    run, project = get_visible_run(session, principal, slug)
    principal.require(project, role)
    locked = repository.lock(session, run.id)
    assert locked is not None
    return locked

from __future__ import annotations

from sqlalchemy.orm import Session

from benchtrail.auth import tokens
from benchtrail.auth.principal import Principal
from benchtrail.errors import Conflict, ErrorCode, InvalidRequest, NotFound
from benchtrail.models import ApiToken, Project
from benchtrail.projects import repository
from benchtrail.projects.schemas import ProjectCreate, ProjectOut, TokenCreated
from benchtrail.revisions import HeadQuery


def create_project(session: Session, data: ProjectCreate) -> Project:
    if repository.get_by_slug(session, data.slug) is not None:
        raise Conflict(f"project '{data.slug}' already exists", code=ErrorCode.PROJECT_EXISTS)
    return repository.add(session, Project(slug=data.slug, name=data.name or data.slug,
                                           description=data.description, is_public=data.is_public,
                                           settings={}))


def by_slug(session: Session, slug: str) -> Project | None:
    """The project, whoever asks (the server host's admin commands)."""
    return repository.get_by_slug(session, slug)


def head(slug: str) -> HeadQuery:
    """id, is_public and revision of the project (`http_cache.remembered_read`)."""
    return repository.head(slug)


def get_visible(session: Session, principal: Principal, slug: str) -> Project:
    """The project if this principal may see it; a private project is indistinguishable from a
    missing one."""
    project = repository.get_by_slug(session, slug)
    if project is None or not principal.can_see(project):
        raise NotFound(f"project '{slug}' not found")
    return project


def list_projects(session: Session, principal: Principal) -> list[ProjectOut]:
    projects = repository.list_visible(
        session, project_id=principal.project_id,
        all_projects=principal.token_id is not None and principal.project_id is None and not principal.is_runner)
    ids = [p.id for p in projects]
    stats = repository.run_stats(session, ids)
    alerts = repository.open_alert_counts(session, ids)
    return [to_out(p, stats.get(p.id, (0, None)), alerts.get(p.id, 0)) for p in projects]


def visible_out(session: Session, principal: Principal, slug: str) -> ProjectOut:
    """One project read, in one query (the project with its run and open-alert counts)."""
    row = repository.get_with_stats(session, slug)
    if row is None or not principal.can_see(row):
        raise NotFound(f"project '{slug}' not found")
    return ProjectOut.model_validate(row._mapping)


def project_out(session: Session, project: Project) -> ProjectOut:
    stats = repository.run_stats(session, [project.id]).get(project.id, (0, None))
    return to_out(project, stats, repository.open_alert_counts(session, [project.id]).get(project.id, 0))


def to_out(p: Project, stats: tuple[int, object] = (0, None), open_alerts: int = 0) -> ProjectOut:
    return ProjectOut(slug=p.slug, name=p.name, description=p.description, is_public=p.is_public,
                      created_at=p.created_at, run_count=stats[0], latest_run_at=stats[1],
                      open_alerts=open_alerts)


def create_token(session: Session, *, project: Project | None, name: str, role: str,
                 pools: list[str] | None = None) -> TokenCreated:
    if role not in (*tokens.ROLES, "runner"):
        raise InvalidRequest(f"role must be one of {', '.join(tokens.ROLES)} or runner", code=ErrorCode.TOKEN_ROLE_UNKNOWN)
    if role == "runner" and project is not None:
        raise InvalidRequest("runner tokens are site-wide; create them without a project", code=ErrorCode.RUNNER_TOKEN_SITE_WIDE)
    if pools is not None:
        if role != "runner":
            raise InvalidRequest("pools: only a runner token is scoped to pools", code=ErrorCode.POOLS_ONLY_FOR_RUNNERS)
        pools = [p.strip() for p in pools]
        if not pools or not all(pools):
            raise InvalidRequest("pools: give one or more pool names (comma-separated), none empty", code=ErrorCode.POOLS_EMPTY)
    secret = tokens.generate()
    row = repository.add_token(session, ApiToken(
        project_id=project.id if project else None, name=name, role=role,
        token_hash=tokens.hash_token(secret), prefix=tokens.display_prefix(secret), pools=pools))
    return TokenCreated(id=row.id, name=name, role=role, project=project.slug if project else None,
                        token=secret)

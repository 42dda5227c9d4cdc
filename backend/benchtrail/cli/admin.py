"""`benchtrail admin ...`: administration on the server host, which talks to the database (and raw files)
directly: create projects and tokens, measure runs again. The other commands are the client's
(`benchtrail.cli.client`); `benchtrail.cli.main` sends each command to its side.

Exit codes: 2 usage error · 3 refused (an unknown project, a bad role) · 4 a run could not be measured again.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, NoReturn

import typer

from benchtrail.cli.client import EXIT_INGEST_FAILED, EXIT_REJECTED

admin_app = typer.Typer(help="Administration on the server host (talks to the database directly).",
                        no_args_is_help=True, add_completion=False)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines")]


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def fail(code: int, message: str) -> NoReturn:
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(code)


@admin_app.command("create-project")
def admin_create_project(slug: Annotated[str, typer.Argument(help="The project's slug (its name in URLs)")],
                         name: Annotated[str | None, typer.Option(help="Its title (default: the slug)")] = None,
                         description: Annotated[str, typer.Option(help="One line on what is measured")] = "",
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
    print(f"project {slug} created ({'private' if private else 'public'})")


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
                print(f"run {slug} measured again: {result['cells']} cells (before: {result['cells_before']})"
                      f"{'' if result['is_valid'] else ', invalid'}; its analysis is queued")
            else:
                print(f"run {slug} kept as it was: {result['error']}", file=sys.stderr)
    if json_out:
        print_json(results)
    if not all(r["ok"] for r in results):
        raise typer.Exit(EXIT_INGEST_FAILED)

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, func, select, tuple_
from sqlalchemy.orm import Session, defer

from benchtrail import revisions
from benchtrail.models import (Blob, Cell, Environment, Load, Project, Run, RunFile, Scenario,
                               Series, Variant)


_HEAD = revisions.head().join(Run, Run.project_id == Project.id).where(Run.slug == bindparam("slug"))


def head(slug: str) -> revisions.HeadQuery:
    """The run's project (id, is_public) and its revision, for a remembered read (http_cache)."""
    return revisions.HeadQuery(_HEAD, {"slug": slug})


# What a runs list shows of each run (`runstate.summary.summary`): not the JSON documents (validity,
# criteria, progress, meta) of the run page.
SUMMARY_COLUMNS = (Run.id, Run.slug, Run.project_id, Run.source, Run.tool, Run.status, Run.is_valid, Run.agent_version,
                   Run.app_version, Run.commit, Run.branch, Run.labels, Run.environment_id, Run.created_at,
                   Run.started_at, Run.finished_at)


def page(session: Session, project_id: int, *, filters: dict[str, Any], labels: dict[str, str],
         offset: int, limit: int, after: tuple[datetime, int] | None = None
         ) -> tuple[Sequence[Row[Any]], int]:
    """Newest first, as plain rows of SUMMARY_COLUMNS and `environment_name` (no ORM objects: a page is
    read, never changed). `after` = (created_at, id) of the last run already shown: keyset pagination,
    whose cost does not grow with the page number (then `offset` is ignored)."""
    stmt = select(*SUMMARY_COLUMNS, Environment.name.label("environment_name")) \
        .outerjoin(Environment, Environment.id == Run.environment_id).where(Run.project_id == project_id)
    for column, value in filters.items():
        if value is not None:
            stmt = stmt.where(getattr(Run, column) == value) if column != "environment" \
                else stmt.where(Environment.name == value)
    if labels:
        stmt = stmt.where(Run.labels.contains(labels))
    total = session.scalar(select(func.count()).select_from(stmt.subquery())) or 0
    if after is not None:
        stmt = stmt.where(tuple_(Run.created_at, Run.id) < tuple_(*after))
        offset = 0
    rows = session.execute(stmt.order_by(Run.created_at.desc(), Run.id.desc()).offset(offset).limit(limit))
    return rows.all(), total


def parts(session: Session, run_id: int, *, with_histograms: bool = False) -> dict[str, Sequence[Any]]:
    def all_of(model: Any, order: Any) -> Sequence[Any]:
        return session.scalars(select(model).where(model.run_id == run_id).order_by(order)).all()

    return {
        "variants": all_of(Variant, Variant.position),
        "scenarios": all_of(Scenario, Scenario.position),
        "loads": all_of(Load, Load.id),
        # The run document needs only whether a cell has a histogram, not the (large) histogram itself, unless the
        # catalog has a metric computed from it (`ingest.values`).
        "cells": session.execute(select(Cell, Cell.histogram.is_not(None))
                                 .options(*(() if with_histograms else (defer(Cell.histogram),)))
                                 .where(Cell.run_id == run_id).order_by(Cell.id)).all(),
        "files": session.execute(select(RunFile, Blob).join(Blob, Blob.id == RunFile.blob_id)
                                 .where(RunFile.run_id == run_id).order_by(RunFile.position)).all(),
    }


def series(session: Session, run_id: int, *, metric: str | None) -> Sequence[Series]:
    stmt = select(Series).where(Series.run_id == run_id).order_by(Series.id)
    if metric:
        stmt = stmt.where(Series.metric == metric)
    return session.scalars(stmt).all()


def histograms(session: Session, run_id: int) -> Sequence[tuple[int, str]]:
    return session.execute(select(Cell.id, Cell.histogram)
                           .where(Cell.run_id == run_id, Cell.histogram.is_not(None))
                           .order_by(Cell.id)).all()


def run_file(session: Session, run_id: int, file_id: int) -> tuple[RunFile, Blob] | None:
    row = session.execute(select(RunFile, Blob).join(Blob, Blob.id == RunFile.blob_id)
                          .where(RunFile.run_id == run_id, RunFile.id == file_id)).first()
    return (row[0], row[1]) if row else None

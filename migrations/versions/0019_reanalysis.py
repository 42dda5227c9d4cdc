"""re-analysis on request: a completed run's analysis may be asked for again

When a run is excluded from its trails or restored (runs/exclusion.py), its validity changes and the
windows of its trails around its point must be judged again. The run's analysis goes back to pending,
so beat's sweeper queues it again should the task be lost: the lifecycle trigger gains the analysis
moves done > pending and failed > pending (runs/lifecycle.py).

Revision ID: 0019
Revises: 0018
"""
from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None

RUN_MOVES = [
    'queued>running', 'queued>failed', 'queued>cancelled',
    'running>ingesting', 'running>failed', 'running>cancelled',
    'ingesting>completed', 'ingesting>failed', 'failed>ingesting',
]
ANALYSIS_MOVES = ['pending>done', 'pending>failed', 'failed>done', 'done>done']
REANALYSIS = ['done>pending', 'failed>pending']


def _array(moves: list[str]) -> str:
    return "ARRAY[" + ", ".join(f"'{m}'" for m in moves) + "]"


def _guard(analysis_moves: list[str]) -> str:
    return f"""
CREATE OR REPLACE FUNCTION runs_guard_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status
     AND (OLD.status || '>' || NEW.status) <> ALL ({_array(RUN_MOVES)}) THEN
    RAISE EXCEPTION 'run % cannot go from % to %', OLD.slug, OLD.status, NEW.status
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.analysis_status IS DISTINCT FROM OLD.analysis_status
     AND (OLD.analysis_status || '>' || NEW.analysis_status) <> ALL ({_array(analysis_moves)}) THEN
    RAISE EXCEPTION 'analysis of run % cannot go from % to %', OLD.slug, OLD.analysis_status,
      NEW.analysis_status USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$"""


def upgrade() -> None:
    op.execute(_guard(ANALYSIS_MOVES + REANALYSIS))


def downgrade() -> None:
    op.execute(_guard(ANALYSIS_MOVES))

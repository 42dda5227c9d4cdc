"""results delivery: the Idempotency-Key of a run's accepted results, and late results for a failed run

`runs.results_key` holds the key a runner sent with the results it delivered, so the same results sent
again (a retry whose answer was lost) are recognised and not stored twice.

A run that failed while its runner could not reach the API (the sweeper saw no heartbeat, or the runner
gave up retrying its upload) may still receive the results of its finished load test from the runner
that claimed it: the lifecycle trigger gains the move failed > ingesting (runs/lifecycle.py).

Revision ID: 0014
Revises: 0012
"""
from alembic import op
import sqlalchemy as sa

revision = '0014'
down_revision = '0012'
branch_labels = None
depends_on = None

RUN_MOVES = [
    'queued>running', 'queued>failed', 'queued>cancelled',
    'running>ingesting', 'running>failed', 'running>cancelled',
    'ingesting>completed', 'ingesting>failed',
]
ANALYSIS_MOVES = ['pending>done', 'pending>failed', 'failed>done', 'done>done']


def _array(moves: list[str]) -> str:
    return "ARRAY[" + ", ".join(f"'{m}'" for m in moves) + "]"


def _guard(run_moves: list[str]) -> str:
    return f"""
CREATE OR REPLACE FUNCTION runs_guard_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status
     AND (OLD.status || '>' || NEW.status) <> ALL ({_array(run_moves)}) THEN
    RAISE EXCEPTION 'run % cannot go from % to %', OLD.slug, OLD.status, NEW.status
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.analysis_status IS DISTINCT FROM OLD.analysis_status
     AND (OLD.analysis_status || '>' || NEW.analysis_status) <> ALL ({_array(ANALYSIS_MOVES)}) THEN
    RAISE EXCEPTION 'analysis of run % cannot go from % to %', OLD.slug, OLD.analysis_status,
      NEW.analysis_status USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$"""


def upgrade() -> None:
    op.add_column('runs', sa.Column('results_key', sa.String(length=200), nullable=True))
    op.execute(_guard(RUN_MOVES + ['failed>ingesting']))


def downgrade() -> None:
    op.execute(_guard(RUN_MOVES))
    op.drop_column('runs', 'results_key')

"""run lifecycle: check constraints on run status and analysis status, a trigger refusing illegal moves

The allowed moves are benchtrail.runstate.lifecycle.TRANSITIONS / ANALYSIS_TRANSITIONS, written out here
so this migration never changes when the code does (tests/integration/test_lifecycle.py checks that
the database and the code agree on every pair).

Revision ID: 0005
Revises: 0004
"""
from alembic import op

revision = '0005'
down_revision = '0004'
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


def upgrade() -> None:
    op.create_check_constraint(
        op.f('ck_runs_status'), 'runs',
        "status IN ('queued', 'running', 'ingesting', 'completed', 'failed', 'cancelled')")
    op.create_check_constraint(
        op.f('ck_runs_analysis_status'), 'runs', "analysis_status IN ('pending', 'done', 'failed')")
    op.execute(f"""
CREATE FUNCTION runs_guard_lifecycle() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status
     AND (OLD.status || '>' || NEW.status) <> ALL ({_array(RUN_MOVES)}) THEN
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
$$""")
    op.execute("""CREATE TRIGGER runs_guard_lifecycle BEFORE UPDATE OF status, analysis_status ON runs
                  FOR EACH ROW EXECUTE FUNCTION runs_guard_lifecycle()""")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS runs_guard_lifecycle ON runs")
    op.execute("DROP FUNCTION IF EXISTS runs_guard_lifecycle()")
    op.drop_constraint('ck_runs_analysis_status', 'runs', type_='check')
    op.drop_constraint('ck_runs_status', 'runs', type_='check')

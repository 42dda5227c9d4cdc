"""CPU profiles of a run's cells, per repetition: weighted stacks with interned frames (benchtrail.profiles)

Revision ID: 0023
Revises: 0022
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'profiles',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('variant_id', sa.Integer(), nullable=False),
        sa.Column('scenario_id', sa.Integer(), nullable=False),
        sa.Column('load_id', sa.Integer(), nullable=False),
        sa.Column('repetition', sa.Integer(), nullable=False),
        sa.Column('step', sa.Integer(), nullable=False),
        sa.Column('runtime', sa.String(length=16), nullable=False),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('period_ms', sa.Double(), nullable=True),
        sa.Column('samples', sa.BigInteger(), nullable=False),
        sa.Column('cpu_ms', sa.Double(), nullable=False),
        sa.Column('requests', sa.BigInteger(), nullable=True),
        sa.Column('outside_window', sa.BigInteger(), nullable=False),
        sa.Column('truncated', sa.BigInteger(), nullable=False),
        sa.Column('frames', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column('stacks', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column('weights', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column('agent_packages', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column('raw_files', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column('meta', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.CheckConstraint("runtime IN ('jvm', 'go', 'python')", name=op.f('ck_profiles_runtime')),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_profiles_run_id_runs'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['variant_id'], ['variants.id'], name=op.f('fk_profiles_variant_id_variants'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['scenario_id'], ['scenarios.id'], name=op.f('fk_profiles_scenario_id_scenarios'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['load_id'], ['loads.id'], name=op.f('fk_profiles_load_id_loads'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_profiles')),
        sa.UniqueConstraint('run_id', 'variant_id', 'scenario_id', 'load_id', 'step',
                            name=op.f('uq_profiles_run_id_variant_id_scenario_id_load_id_step')),
    )
    op.create_index(op.f('ix_profiles_run_id'), 'profiles', ['run_id'], unique=False)
    # A write of a run's profiles is a write of its project: logged, so its revision (and every answer kept
    # under it, benchtrail/revisions.py) moves, with the trigger function of the run's other children (0018).
    for event, rows in (('INSERT', 'NEW'), ('UPDATE', 'NEW'), ('DELETE', 'OLD')):
        op.execute(f"CREATE TRIGGER log_change_{event.lower()} AFTER {event} ON profiles "
                   f"REFERENCING {rows} TABLE AS changed_rows FOR EACH STATEMENT "
                   f"EXECUTE FUNCTION benchtrail_log_change_via_runs()")


def downgrade() -> None:
    for event in ('insert', 'update', 'delete'):
        op.execute(f"DROP TRIGGER log_change_{event} ON profiles")
    op.drop_index(op.f('ix_profiles_run_id'), table_name='profiles')
    op.drop_table('profiles')

"""run shares: a plan run over several load generators (plan `generators: N`)

One row per share of a run: which runner (name, host, token) claimed it, its state and heartbeat, why
it failed and the Idempotency-Key of the results it delivered. A run of one generator has no rows.

Revision ID: 0016
Revises: 0014
"""
from alembic import op
import sqlalchemy as sa

revision = '0016'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'run_shares',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('run_id', sa.Integer(), sa.ForeignKey('runs.id', ondelete='CASCADE'), nullable=False),
        sa.Column('index', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False, server_default='queued'),
        sa.Column('runner', sa.String(length=200), nullable=True),
        sa.Column('host', sa.String(length=200), nullable=True),
        sa.Column('runner_token_id', sa.Integer(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('results_key', sa.String(length=200), nullable=True),
        sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint('run_id', 'index', name=op.f('uq_run_shares_run_id_index')),
        sa.CheckConstraint("status IN ('queued', 'running', 'delivered', 'failed', 'cancelled')",
                           name=op.f('ck_run_shares_status')),
        sa.CheckConstraint('"index" >= 0', name=op.f('ck_run_shares_index')),
    )


def downgrade() -> None:
    op.drop_table('run_shares')

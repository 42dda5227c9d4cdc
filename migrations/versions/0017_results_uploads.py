"""resumable results uploads: a runner's results package arrives in chunks to an upload session

`results_uploads` keeps one session per (run, Idempotency-Key): what the package holds (the results
metadata, each file's name, size and sha256), its total size and how many bytes the server holds
(`received`, the offset the runner resumes from after a cut). The chunks themselves are in the raw file
store (benchtrail/storage.py) until the session is committed into the run's results, exactly once.

Revision ID: 0017
Revises: 0014
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'results_uploads',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('idempotency_key', sa.String(length=200), nullable=False),
        sa.Column('metadata', sa.Text(), nullable=False),
        sa.Column('files', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column('size', sa.BigInteger(), nullable=False),
        sa.Column('received', sa.BigInteger(), nullable=False, server_default='0'),
        sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.Column('committed_at', sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint('received >= 0 AND received <= size', name=op.f('ck_results_uploads_received_in_size')),
        sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_results_uploads_run_id_runs'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_results_uploads')),
        sa.UniqueConstraint('run_id', 'idempotency_key', name=op.f('uq_results_uploads_run_id_idempotency_key')),
    )


def downgrade() -> None:
    op.drop_table('results_uploads')

"""a cell's mode and a trail's mode hold a micro-benchmark's measure, and a score's unit any tool's unit

Go benchmarks' custom metrics (b.ReportMetric units), Google Benchmark's user counters and Bencher's measures
are modes of their own (one trail per measure, as a JMH mode): 16 characters held JMH's modes only. A score's
unit may carry the direction its file gave it ("MB/s ↑").

Revision ID: 0024
Revises: 0023
"""
import sqlalchemy as sa
from alembic import op

revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.alter_column('cells', 'mode', type_=sa.String(64), existing_type=sa.String(16), existing_nullable=False)
    op.alter_column('trails', 'mode', type_=sa.String(64), existing_type=sa.String(16), existing_nullable=False)
    op.alter_column('cells', 'score_unit', type_=sa.String(64), existing_type=sa.String(32), existing_nullable=True)


def downgrade() -> None:
    op.alter_column('cells', 'score_unit', type_=sa.String(32), existing_type=sa.String(64), existing_nullable=True)
    op.alter_column('trails', 'mode', type_=sa.String(16), existing_type=sa.String(64), existing_nullable=False)
    op.alter_column('cells', 'mode', type_=sa.String(16), existing_type=sa.String(64), existing_nullable=False)

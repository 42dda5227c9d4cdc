"""a completed run measured again from its stored files: when

`benchtrail admin reingest` replaces a completed run's cells and series with what this version's parsers
read from its stored files (ingest/service.py reingest_run). The run says when (`remeasured_at`, null
if never), and the API processes key the measured part of a run they keep in memory by it.

Revision ID: 0020
Revises: 0019
"""
import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('runs', sa.Column('remeasured_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    op.drop_column('runs', 'remeasured_at')

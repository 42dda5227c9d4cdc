"""cell repetitions: per-repetition histograms, statistics and the single repetition's timeline

Revision ID: 0003
Revises: 0002
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('cells', sa.Column('repetitions', postgresql.JSONB(astext_type=sa.Text()),
                                     server_default='[]', nullable=False))


def downgrade() -> None:
    op.drop_column('cells', 'repetitions')

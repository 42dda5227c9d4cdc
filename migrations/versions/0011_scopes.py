"""scopes: runner token pools, plan secrets kept apart from the plan body, a schedule's agent version

Revision ID: 0011
Revises: 0010
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL = a runner token that may claim runs of every pool.
    op.add_column('api_tokens', sa.Column('pools', postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    # Request headers of the plan's scenarios ({scenario: {header: value}}); the body keeps "***".
    op.add_column('plans', sa.Column('secrets', postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.add_column('schedules', sa.Column('agent_version', sa.String(length=100), nullable=True))


def downgrade() -> None:
    op.drop_column('schedules', 'agent_version')
    op.drop_column('plans', 'secrets')
    op.drop_column('api_tokens', 'pools')

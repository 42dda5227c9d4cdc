"""dashboard: a plan keeps the YAML text it was created from (comments and key order), shown as is

Revision ID: 0006
Revises: 0005
"""
from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL for plans created from JSON (or before this revision): the dashboard renders their body as YAML.
    op.add_column('plans', sa.Column('source_yaml', sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column('plans', 'source_yaml')

"""a resumable results upload lists its parts: each chunk is written to the store with no transaction open

A chunk (up to 64 MB) used to be written to the raw file store inside the transaction that advanced the
session's offset, under a name made of its first byte's offset, so that a database connection and the
session's row lock waited on the disk or the object store. Now the chunk is written first, under a name of
its own (`<offset>-<random>`), and a short transaction records it in `parts` (the package's parts in order)
unless another request advanced the offset meanwhile. NULL for a session opened before this revision: its
parts are named by their offsets alone, and found by listing the store.

Revision ID: 0022
Revises: 0021
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('results_uploads', sa.Column('parts', postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column('results_uploads', 'parts')

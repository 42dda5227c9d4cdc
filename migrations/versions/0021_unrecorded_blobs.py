"""raw files written to the store before the transaction that records them: which, since when

An upload checks its files and writes them to the raw file store before the transaction that records
them, so that no database connection waits on a disk or an object store. `unrecorded_blobs` names each
file being written that way, one row per upload request (`attempt`); the recording transaction removes the
rows. A row that stays (the upload failed and could not remove its object, or its process died in between)
tells beat's sweeper which object no blob row may refer to: it removes that object unless a blob row refers
to it by then.

Revision ID: 0021
Revises: 0020
"""
import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'unrecorded_blobs',
        sa.Column('sha256', sa.String(length=64), nullable=False),
        sa.Column('attempt', sa.String(length=32), nullable=False),
        sa.Column('written_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
        sa.PrimaryKeyConstraint('sha256', 'attempt', name=op.f('pk_unrecorded_blobs')),
    )
    op.create_index(op.f('ix_unrecorded_blobs_written_at'), 'unrecorded_blobs', ['written_at'])


def downgrade() -> None:
    op.drop_table('unrecorded_blobs')

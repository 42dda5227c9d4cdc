"""alerts in version order: cells carry their run's sortable x-axis key (windowed analysis reads the
points around a new one by index), alerts record why the analysis withdrew them, and the stored
detection state no longer lists every run of the trail

Revision ID: 0004
Revises: 0003
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Set by the analysis of the cell's run (and for a whole trail when it is analysed from scratch).
    op.add_column('cells', sa.Column('order_key', sa.LargeBinary(), nullable=True))
    op.create_index('ix_cells_trail_id_order_key', 'cells', ['trail_id', 'order_key'], unique=False)
    op.add_column('alerts', sa.Column('state_reason', sa.Text(), nullable=True))
    # Old detection state (run_ids of the whole trail, alerted culprits as fixed points) is not
    # reused: every trail is analysed from scratch once, by its next run.
    op.execute("DELETE FROM trail_analyses")
    op.drop_column('trail_analyses', 'run_ids')


def downgrade() -> None:
    op.execute("DELETE FROM trail_analyses")
    op.add_column('trail_analyses', sa.Column('run_ids', postgresql.ARRAY(sa.Integer()), nullable=False))
    op.drop_column('alerts', 'state_reason')
    op.drop_index('ix_cells_trail_id_order_key', table_name='cells')
    op.drop_column('cells', 'order_key')

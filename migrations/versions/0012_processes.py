"""processes: a variant's named processes (consumer, provider) get their own resource cells, series and trails

Revision ID: 0012
Revises: 0011
"""
from alembic import op
import sqlalchemy as sa

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # '' = the variant as a whole (every cell before this revision).
    for table in ('cells', 'series', 'trails'):
        op.add_column(table, sa.Column('process', sa.String(length=32), nullable=False, server_default=''))
    op.drop_constraint('uq_cells_run_id_variant_id_scenario_id_load_id_mode', 'cells', type_='unique')
    op.create_unique_constraint('uq_cells_run_id_variant_id_scenario_id_load_id_mode_process', 'cells',
                                ['run_id', 'variant_id', 'scenario_id', 'load_id', 'mode', 'process'])


def downgrade() -> None:
    op.execute("DELETE FROM cells WHERE process <> ''")
    op.execute("DELETE FROM series WHERE process <> ''")
    op.drop_constraint('uq_cells_run_id_variant_id_scenario_id_load_id_mode_process', 'cells', type_='unique')
    op.create_unique_constraint('uq_cells_run_id_variant_id_scenario_id_load_id_mode', 'cells',
                                ['run_id', 'variant_id', 'scenario_id', 'load_id', 'mode'])
    for table in ('trails', 'series', 'cells'):
        op.drop_column(table, 'process')

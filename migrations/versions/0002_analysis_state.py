"""analysis state: run analysis status, stored overheads, per-trail detection state, alert origin

Revision ID: 0002
Revises: 0001
"""
from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # pending until the analysis task has looked at the run; the CLI's --wait waits for it.
    op.add_column('runs', sa.Column('analysis_status', sa.String(length=16), server_default='pending',
                                    nullable=False))

    op.add_column('alerts', sa.Column('detected_by_run_id', sa.Integer(), nullable=True))
    op.create_foreign_key(op.f('fk_alerts_detected_by_run_id_runs'), 'alerts', 'runs',
                          ['detected_by_run_id'], ['id'], ondelete='SET NULL')
    op.create_index(op.f('ix_alerts_detected_by_run_id'), 'alerts', ['detected_by_run_id'], unique=False)
    op.add_column('alerts', sa.Column('effect_sigma', sa.Double(), nullable=True))
    op.add_column('alerts', sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'),
                                      nullable=False))

    op.create_table('overheads',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('trail_id', sa.Integer(), nullable=False),
    sa.Column('cell_id', sa.Integer(), nullable=False),
    sa.Column('ref_cell_id', sa.Integer(), nullable=False),
    sa.Column('metric', sa.String(length=32), nullable=False),
    sa.Column('reference', sa.Double(), nullable=False),
    sa.Column('variant', sa.Double(), nullable=False),
    sa.Column('abs_diff', sa.Double(), nullable=False),
    sa.Column('rel_diff', sa.Double(), nullable=True),
    sa.Column('ci_low', sa.Double(), nullable=True),
    sa.Column('ci_high', sa.Double(), nullable=True),
    sa.Column('verdict', sa.String(length=32), nullable=False),
    sa.Column('detail', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['runs.id'], name=op.f('fk_overheads_run_id_runs'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trail_id'], ['trails.id'], name=op.f('fk_overheads_trail_id_trails'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['cell_id'], ['cells.id'], name=op.f('fk_overheads_cell_id_cells'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['ref_cell_id'], ['cells.id'], name=op.f('fk_overheads_ref_cell_id_cells'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_overheads')),
    sa.UniqueConstraint('cell_id', 'metric', name=op.f('uq_overheads_cell_id')),
    )
    op.create_index(op.f('ix_overheads_run_id'), 'overheads', ['run_id'], unique=False)
    op.create_index('ix_overheads_trail_metric', 'overheads', ['trail_id', 'metric'], unique=False)

    op.create_table('trail_analyses',
    sa.Column('trail_id', sa.Integer(), nullable=False),
    sa.Column('metric', sa.String(length=32), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('run_ids', postgresql.ARRAY(sa.Integer()), nullable=False),
    sa.Column('settings_key', sa.String(length=64), nullable=False),
    sa.Column('change_points', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['trail_id'], ['trails.id'], name=op.f('fk_trail_analyses_trail_id_trails'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('trail_id', 'metric', 'kind', name=op.f('pk_trail_analyses')),
    )
    op.create_index('ix_trails_project_identity', 'trails', ['project_id', 'scenario', 'variant'], unique=False)
    op.create_index('ix_cells_trail_id_run_id', 'cells', ['trail_id', 'run_id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_cells_trail_id_run_id', table_name='cells')
    op.drop_index('ix_trails_project_identity', table_name='trails')
    op.drop_table('trail_analyses')
    op.drop_index('ix_overheads_trail_metric', table_name='overheads')
    op.drop_index(op.f('ix_overheads_run_id'), table_name='overheads')
    op.drop_table('overheads')
    op.drop_column('alerts', 'updated_at')
    op.drop_column('alerts', 'effect_sigma')
    op.drop_index(op.f('ix_alerts_detected_by_run_id'), table_name='alerts')
    op.drop_constraint(op.f('fk_alerts_detected_by_run_id_runs'), 'alerts', type_='foreignkey')
    op.drop_column('alerts', 'detected_by_run_id')
    op.drop_column('runs', 'analysis_status')

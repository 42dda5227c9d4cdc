"""the change log that keys cached reads: every write to a project's data is logged by the database

Each statement that writes rows a read shows (a project, its runs and everything in them, its trails,
analyses, alerts, annotations, plans) inserts one row per (project, writing transaction) into
`project_changes`, from a statement-level trigger, so no write path can forget it. A project's
revision is `project_revisions.folded` + its number of rows in `project_changes`: it grows by one with
each committed writing transaction, in the order readers see them, and never blocks a writer (the rows
are inserted, never updated, so two writers never wait for each other). The API keys the answers it
keeps in memory by it (benchtrail/revisions.py); a periodic task folds the rows into `folded`.

Revision ID: 0018
Revises: 0017
"""
from alembic import op
import sqlalchemy as sa

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None

# table -> how its rows name their project: a column of its own, or (column, parent table) through the
# parent row. One trigger function per way, with static SQL (planned once per session, unlike EXECUTE).
LOGGED = {
    'projects': 'id',
    'environments': 'project_id', 'runs': 'project_id', 'trails': 'project_id', 'alerts': 'project_id',
    'annotations': 'project_id', 'plans': 'project_id', 'schedules': 'project_id', 'snapshots': 'project_id',
    'run_shares': ('run_id', 'runs'), 'run_files': ('run_id', 'runs'), 'variants': ('run_id', 'runs'),
    'scenarios': ('run_id', 'runs'), 'loads': ('run_id', 'runs'), 'cells': ('run_id', 'runs'),
    'series': ('run_id', 'runs'), 'overheads': ('run_id', 'runs'), 'results_uploads': ('run_id', 'runs'),
    'trail_analyses': ('trail_id', 'trails'), 'alert_events': ('alert_id', 'alerts'),
}


def _function(way: str | tuple[str, str]) -> tuple[str, str]:
    """(name, CREATE FUNCTION) of the trigger function logging the changed rows' projects."""
    if isinstance(way, str):
        name, rows = f'benchtrail_log_change_{way}', f'SELECT DISTINCT {way}, txid_current() FROM changed_rows'
    else:
        # A row whose parent is gone in the same statement (a cascade) is logged by the parent's own trigger.
        column, parent = way
        name = f'benchtrail_log_change_via_{parent}'
        rows = (f'SELECT DISTINCT p.project_id, txid_current() FROM changed_rows c '
                f'JOIN {parent} p ON p.id = c.{column}')
    return name, (f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                  f"INSERT INTO project_changes (project_id, txid) {rows} ON CONFLICT DO NOTHING; "
                  f"RETURN NULL; END $$")


def upgrade() -> None:
    op.create_table(
        'project_changes',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('txid', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('project_id', 'txid', name=op.f('pk_project_changes')),
    )
    op.create_table(
        'project_revisions',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('folded', sa.BigInteger(), nullable=False, server_default='0'),
        sa.PrimaryKeyConstraint('project_id', name=op.f('pk_project_revisions')),
    )
    for way in dict.fromkeys(LOGGED.values()):
        op.execute(_function(way)[1])
    for table, way in LOGGED.items():
        for event, rows in (('INSERT', 'NEW'), ('UPDATE', 'NEW'), ('DELETE', 'OLD')):
            op.execute(f"CREATE TRIGGER log_change_{event.lower()} AFTER {event} ON {table} "
                       f"REFERENCING {rows} TABLE AS changed_rows FOR EACH STATEMENT "
                       f"EXECUTE FUNCTION {_function(way)[0]}()")


def downgrade() -> None:
    for table in LOGGED:
        for event in ('insert', 'update', 'delete'):
            op.execute(f"DROP TRIGGER log_change_{event} ON {table}")
    for way in dict.fromkeys(LOGGED.values()):
        op.execute(f"DROP FUNCTION {_function(way)[0]}()")
    op.drop_table('project_revisions')
    op.drop_table('project_changes')

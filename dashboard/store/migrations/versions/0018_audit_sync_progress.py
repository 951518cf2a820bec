"""How far each bank's audit log has been read, kept with the cursor so any page (and any instance on the store) can say
it, and who is reading it: the log's recall entries when last counted, when the first catch-up reached the log's newest
entry, and the lease of the one reader that reads it now (several instances on one store share one catch-up). The count
of entries read is made exact here (the projection's rows), so a page reads it from this row, not by counting them.

Revision ID: 0018_audit_sync_progress
Revises: 0017_person_ids
"""

import sqlalchemy as sa
from alembic import op

revision = "0018_audit_sync_progress"
down_revision = "0017_person_ids"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)
COLUMNS = ("log_entries", "caught_up_at", "reader", "lease_until")


def upgrade() -> None:
    op.add_column("audit_sync_state", sa.Column("log_entries", sa.Integer, nullable=True))
    op.add_column("audit_sync_state", sa.Column("caught_up_at", TZ, nullable=True))
    op.add_column("audit_sync_state", sa.Column("reader", sa.String(120), nullable=True))
    op.add_column("audit_sync_state", sa.Column("lease_until", TZ, nullable=True))
    # A bank with entries but no cursor row (entries stored by hand, or a sync stopped between its two writes), then
    # every row's count from the rows themselves. A store that had a cursor had finished a sync: it has caught up.
    op.execute(
        "INSERT INTO audit_sync_state (bank_id, synced_until, entries)"
        " SELECT bank_id, max(started_at), 0 FROM audit_recalls"
        " WHERE bank_id NOT IN (SELECT bank_id FROM audit_sync_state) GROUP BY bank_id"
    )
    op.execute(
        "UPDATE audit_sync_state SET entries = (SELECT count(*) FROM audit_recalls WHERE audit_recalls.bank_id = audit_sync_state.bank_id),"
        " caught_up_at = synced_until"
    )


def downgrade() -> None:
    # Not batch mode: SQLite (3.35+) drops a column in place.
    for column in reversed(COLUMNS):
        op.execute(f"ALTER TABLE audit_sync_state DROP COLUMN {column}")

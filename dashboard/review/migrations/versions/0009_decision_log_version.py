"""A version of the decision log that the database moves on every insert, state change or delete, so a queue page
keeps each case's state between runs and reads it again only when the log changed (Outbox.decision_states).

Triggers rather than the code's write paths: no writer, today's or a later one, can forget to move it.

Revision ID: 0009_decision_log_version
Revises: 0008_case_latest_index
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_decision_log_version"
down_revision = "0008_case_latest_index"
branch_labels = None
depends_on = None

LOG = "review_decisions"
BUMP = f"UPDATE review_log_versions SET version = version + 1 WHERE log = '{LOG}'"
SQLITE_EVENTS = {"inserted": "INSERT", "state_changed": "UPDATE OF state", "deleted": "DELETE"}


def upgrade() -> None:
    op.create_table(
        "review_log_versions",
        sa.Column("log", sa.String(40), primary_key=True),
        sa.Column("version", sa.BigInteger, nullable=False),
    )
    op.execute(f"INSERT INTO review_log_versions (log, version) VALUES ('{LOG}', 0)")
    if op.get_bind().dialect.name == "postgresql":  # once per statement: a COPY of a million rows moves it once
        op.execute(f"CREATE FUNCTION {LOG}_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {BUMP}; RETURN NULL; END $$")
        op.execute(f"CREATE TRIGGER {LOG}_changed AFTER INSERT OR DELETE OR UPDATE OF state ON {LOG} "
                   f"FOR EACH STATEMENT EXECUTE FUNCTION {LOG}_changed()")
    else:  # SQLite has row triggers only
        for name, event in SQLITE_EVENTS.items():
            op.execute(f"CREATE TRIGGER {LOG}_{name} AFTER {event} ON {LOG} BEGIN {BUMP}; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP TRIGGER {LOG}_changed ON {LOG}")
        op.execute(f"DROP FUNCTION {LOG}_changed()")
    else:
        for name in SQLITE_EVENTS:
            op.execute(f"DROP TRIGGER {LOG}_{name}")
    op.drop_table("review_log_versions")

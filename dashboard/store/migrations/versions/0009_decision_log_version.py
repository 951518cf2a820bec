"""A version of the decision log and its four-eyes steps that the database moves on every change, so a queue page
keeps what it read of them between runs and reads again only when they changed (Outbox.decision_states,
Approvals.held): a decision inserted, its state changed or a row deleted; an approval step written or deleted.

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

LOG = "review_decisions"  # the version's row: the decision log, its approval steps included
BUMP = f"UPDATE review_log_versions SET version = version + 1 WHERE log = '{LOG}'"
EVENTS = {  # table -> (trigger name suffix, event)
    "review_decisions": (("inserted", "INSERT"), ("state_changed", "UPDATE OF state"), ("deleted", "DELETE")),
    "review_approvals": (("inserted", "INSERT"), ("deleted", "DELETE")),
}


def upgrade() -> None:
    op.create_table(
        "review_log_versions",
        sa.Column("log", sa.String(40), primary_key=True),
        sa.Column("version", sa.BigInteger, nullable=False),
    )
    op.execute(f"INSERT INTO review_log_versions (log, version) VALUES ('{LOG}', 0)")
    postgres = op.get_bind().dialect.name == "postgresql"
    if postgres:
        op.execute(
            f"CREATE FUNCTION {LOG}_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {BUMP}; RETURN NULL; END $$"
        )
    for table, events in EVENTS.items():
        if postgres:  # once per statement: a COPY of a million rows moves it once
            on = " OR ".join(event for _name, event in events)
            op.execute(
                f"CREATE TRIGGER {table}_changed AFTER {on} ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {LOG}_changed()"
            )
        else:  # SQLite has row triggers only
            for name, event in events:
                op.execute(f"CREATE TRIGGER {table}_{name} AFTER {event} ON {table} BEGIN {BUMP}; END")


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for table, events in EVENTS.items():
        if postgres:
            op.execute(f"DROP TRIGGER {table}_changed ON {table}")
        else:
            for name, _event in events:
                op.execute(f"DROP TRIGGER {table}_{name}")
    if postgres:
        op.execute(f"DROP FUNCTION {LOG}_changed()")
    op.drop_table("review_log_versions")

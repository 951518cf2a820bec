"""A table of standing decisions: one row per case, its newest decision that is not held for a second approval or
review, with what the queue pages and the Overview read of it (state, outcome, the report columns of 0010, the
agent's confidence). Grouping a million-row log per case on every read took ~1.1 s for the queue's states, ~0.5 s
for the Overview's counts and ~0.65 s for the calibration over 100,000 cases (docs/scaling.md); this table has
one narrow row per case.

The database keeps it, by triggers on the decision log (migrations/standing_triggers.py), as it moves the log's
version (0009), so no writer can forget it:
- a row inserted, or whose state changes, that is not held becomes its case's standing decision unless a newer one
  already stands (decisions are append-only, so inserted rows are the newest; an approval confirmed late is not);
- a standing row deleted, or put on hold by hand, gives way to the case's newest remaining decision.
Only the changed rows are read (PostgreSQL: once per statement, from its transition tables, so the bench's COPY of
a million rows is one pass), never the whole log. Each row written carries the table's change count, so a queue page
that kept the table reads again only the rows changed since (Outbox.decision_states).

Revision ID: 0012_standing_decisions
Revises: 0011_case_flags_jsonb
"""

import sqlalchemy as sa
from alembic import op

from dashboard.store.migrations.standing_triggers import CASE, COUNTER, TABLE, StandingTriggers, drop_triggers

revision = "0012_standing_decisions"
down_revision = "0011_case_flags_jsonb"
branch_labels = None
depends_on = None

COLUMNS = (
    *CASE,
    "decision_id",
    "state",
    "outcome",
    "ticket_action",
    "decided_on",
    "overridden",
    "reason_code",
    "vendor",
    "agent_confidence",
    "change_seq",
)
# A decisions row `r` as the standing table's columns, per dialect.
VALUES = {
    "postgresql": "r.bank_id, r.case_kind, r.case_id, r.id, r.state, r.decision ->> 'outcome', r.decision ->> 'ticket_action',"
    f" r.decided_on, r.overridden, r.reason_code, r.vendor, r.record -> 'metadata' ->> 'agent_confidence', {COUNTER}",
    "sqlite": "r.bank_id, r.case_kind, r.case_id, r.id, r.state, json_extract(r.decision, '$.outcome'),"
    " json_extract(r.decision, '$.ticket_action'), r.decided_on, r.overridden, r.reason_code, r.vendor,"
    f" json_extract(r.record, '$.metadata.agent_confidence'), {COUNTER}",
}
TRIGGERS = StandingTriggers(COLUMNS, VALUES)


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("bank_id", sa.String(200), primary_key=True),
        sa.Column("case_kind", sa.String(20), primary_key=True),
        sa.Column("case_id", sa.String(200), primary_key=True),
        sa.Column("decision_id", sa.Integer, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("outcome", sa.String(40), nullable=True),
        sa.Column("ticket_action", sa.String(40), nullable=True),
        sa.Column("decided_on", sa.Date, nullable=True),
        sa.Column("overridden", sa.Boolean, nullable=True),
        sa.Column("reason_code", sa.String(200), nullable=True),
        sa.Column("vendor", sa.String(200), nullable=True),
        sa.Column("agent_confidence", sa.String(40), nullable=True),
        sa.Column("change_seq", sa.BigInteger, nullable=False),
    )
    op.create_index(f"ix_{TABLE}_decision_id", TABLE, ["decision_id"])  # a deleted decision finds its case's row
    op.create_index(f"ix_{TABLE}_changes", TABLE, ["bank_id", "case_kind", "change_seq"])  # the rows changed since
    op.execute(f"INSERT INTO review_log_versions (log, version) VALUES ('{TABLE}', 0)")
    dialect = op.get_bind().dialect.name
    op.execute(TRIGGERS.fill(dialect))
    for statement in TRIGGERS.create(dialect):
        op.execute(statement)


def downgrade() -> None:
    for statement in drop_triggers(op.get_bind().dialect.name):
        op.execute(statement)
    op.drop_table(TABLE)
    op.execute(f"DELETE FROM review_log_versions WHERE log = '{TABLE}'")

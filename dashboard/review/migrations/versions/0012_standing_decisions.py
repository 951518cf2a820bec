"""A table of standing decisions: one row per case, its newest decision that is not held for a second approval or
review, with what the queue pages and the Overview read of it (state, outcome, the report columns of 0010, the
agent's confidence). Grouping a million-row log per case on every read took ~1.1 s for the queue's states, ~0.5 s
for the Overview's counts and ~0.65 s for the calibration over 100,000 cases (docs/scaling.md); this table has
one narrow row per case.

The database keeps it, by triggers on the decision log, as it moves the log's version (0009), so no writer can
forget it:
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

revision = "0012_standing_decisions"
down_revision = "0011_case_flags_jsonb"
branch_labels = None
depends_on = None

TABLE = "review_standing_decisions"
HELD = "('awaiting_approval', 'returned', 'awaiting_second', 'awaiting_lead')"  # review.schema.HELD, as of this revision
CASE = ("bank_id", "case_kind", "case_id")
COLUMNS = (*CASE, "decision_id", "state", "outcome", "ticket_action", "decided_on", "overridden", "reason_code", "vendor",
           "agent_confidence", "change_seq")
# The standing table's own counter (a row of review_log_versions), moved by its triggers whenever they change it; each
# row written carries the count it was written at, so a reader that kept the table reads only the rows changed since.
# The triggers hold the counter's row until they commit: counts commit in order.
COUNTER = f"(SELECT version FROM review_log_versions WHERE log = '{TABLE}')"
BUMP = f"UPDATE review_log_versions SET version = version + 1 WHERE log = '{TABLE}'"
NAMES = ", ".join(COLUMNS)
# A decisions row `r` as the standing table's columns, per dialect.
VALUES = {
    "postgresql": "r.bank_id, r.case_kind, r.case_id, r.id, r.state, r.decision ->> 'outcome', r.decision ->> 'ticket_action',"
                  f" r.decided_on, r.overridden, r.reason_code, r.vendor, r.record -> 'metadata' ->> 'agent_confidence', {COUNTER}",
    "sqlite": "r.bank_id, r.case_kind, r.case_id, r.id, r.state, json_extract(r.decision, '$.outcome'),"
              " json_extract(r.decision, '$.ticket_action'), r.decided_on, r.overridden, r.reason_code, r.vendor,"
              f" json_extract(r.record, '$.metadata.agent_confidence'), {COUNTER}",
}
# Taking a case's place only from an older standing decision: a confirmation that lands after a newer decision
# leaves the newer one standing.
NEWER = (f" ON CONFLICT ({', '.join(CASE)}) DO UPDATE SET "
         + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[3:])
         + f" WHERE excluded.decision_id >= {TABLE}.decision_id")
SAME_CASE = " AND ".join(f"d.{c} = g.{c}" for c in CASE)


def _newest_remaining(dialect: str, gone: str) -> str:
    """The newest decision not held of each case in `gone` (rows deleted or held), for cases left without one."""
    return (f"INSERT INTO {TABLE} ({NAMES}) SELECT {VALUES[dialect]} FROM review_decisions r WHERE r.id IN"
            f" (SELECT max(d.id) FROM review_decisions d JOIN {gone} g ON {SAME_CASE} WHERE d.state NOT IN {HELD}"
            f" GROUP BY d.bank_id, d.case_kind, d.case_id) ON CONFLICT DO NOTHING")


# PostgreSQL: statement triggers reading their transition tables (`changed`, and `old_rows` for an update's old rows).
POSTGRES_STANDS = (f"INSERT INTO {TABLE} ({NAMES}) SELECT DISTINCT ON (r.bank_id, r.case_kind, r.case_id) {VALUES['postgresql']}"
                   f" FROM {{rows}} r WHERE r.state NOT IN {HELD} ORDER BY r.bank_id, r.case_kind, r.case_id, r.id DESC{NEWER}")
POSTGRES_GIVES_WAY = f"DELETE FROM {TABLE} s USING {{rows}} g WHERE s.decision_id = g.id"
STATE_CHANGED = "(SELECT n.* FROM changed n JOIN old_rows o ON o.id = n.id WHERE n.state IS DISTINCT FROM o.state)"
HELD_NOW = f"(SELECT * FROM {STATE_CHANGED} c WHERE c.state IN {HELD})"
POSTGRES = {  # event -> (transition tables, body); an update changes nothing (nor takes the counter) unless a state did
    "INSERT": ("NEW TABLE AS changed", [BUMP, POSTGRES_STANDS.format(rows="changed")]),
    "UPDATE": ("OLD TABLE AS old_rows NEW TABLE AS changed", [
        f"IF EXISTS {STATE_CHANGED} THEN {BUMP}",
        POSTGRES_STANDS.format(rows=STATE_CHANGED),
        POSTGRES_GIVES_WAY.format(rows=HELD_NOW), _newest_remaining("postgresql", HELD_NOW),
        "END IF",
    ]),
    "DELETE": ("OLD TABLE AS changed", [BUMP, POSTGRES_GIVES_WAY.format(rows="changed"), _newest_remaining("postgresql", "changed")]),
}

# SQLite: row triggers (NEW / OLD); writers are serialised by the database lock.
SQLITE_STANDS = f"INSERT INTO {TABLE} ({NAMES}) SELECT {VALUES['sqlite']} FROM review_decisions r WHERE r.id = NEW.id{NEWER}"


def _sqlite_gives_way(row: str) -> list[str]:
    """`row` (NEW or OLD) no longer stands: its case's newest remaining decision does, if any."""
    case = "(SELECT " + ", ".join(f"{row}.{c} AS {c}" for c in CASE) + ")"
    return [BUMP, f"DELETE FROM {TABLE} WHERE decision_id = {row}.id", _newest_remaining("sqlite", case)]


SQLITE = {  # trigger name suffix -> (event, when, body)
    "inserted": ("INSERT", f"NEW.state NOT IN {HELD}", [BUMP, SQLITE_STANDS]),
    "stands": ("UPDATE OF state", f"NEW.state IS NOT OLD.state AND NEW.state NOT IN {HELD}", [BUMP, SQLITE_STANDS]),
    "held": ("UPDATE OF state", f"NEW.state IS NOT OLD.state AND NEW.state IN {HELD}", _sqlite_gives_way("NEW")),
    "deleted": ("DELETE", "1", _sqlite_gives_way("OLD")),
}


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
    op.execute(f"INSERT INTO {TABLE} ({NAMES}) SELECT {VALUES[dialect]} FROM review_decisions r WHERE r.id IN"
               f" (SELECT max(id) FROM review_decisions WHERE state NOT IN {HELD} GROUP BY bank_id, case_kind, case_id)")
    if dialect == "postgresql":
        for event, (tables, body) in POSTGRES.items():
            name = f"{TABLE}_{event.lower()}"
            statements = "; ".join(body)
            op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {statements}; RETURN NULL; END $$")
            op.execute(f"CREATE TRIGGER {name} AFTER {event} ON review_decisions REFERENCING {tables}"
                       f" FOR EACH STATEMENT EXECUTE FUNCTION {name}()")
    else:
        for suffix, (event, when, body) in SQLITE.items():
            statements = "; ".join(body)
            op.execute(f"CREATE TRIGGER {TABLE}_{suffix} AFTER {event} ON review_decisions WHEN {when} BEGIN {statements}; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for event in POSTGRES:
            name = f"{TABLE}_{event.lower()}"
            op.execute(f"DROP TRIGGER {name} ON review_decisions")
            op.execute(f"DROP FUNCTION {name}()")
    else:
        for suffix in SQLITE:
            op.execute(f"DROP TRIGGER {TABLE}_{suffix}")
    op.drop_table(TABLE)
    op.execute(f"DELETE FROM review_log_versions WHERE log = '{TABLE}'")

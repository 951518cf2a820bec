"""Each per-case flags row carries the table's change count when it was written, so the Overview keeps its counts of a
queue's flags between runs and reads only the rows written since (review/flag_counts.py), not 100,000 rows each run
(~0.25 s of every Overview run at that size, docs/scaling.md). A second counter moves when rows are deleted: then
the reader reads everything again.

Triggers, as in 0009 and 0012, so no writer can forget: on PostgreSQL the statement moves the counter once (a COPY
of 100,000 rows is one move) and holds its row until commit, so counts commit in order; each row takes the
counter's value. SQLite's row triggers do the same per row; its writers are serialised by the database lock.

Revision ID: 0013_case_flags_changes
Revises: 0012_standing_decisions
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_case_flags_changes"
down_revision = "0012_standing_decisions"
branch_labels = None
depends_on = None

TABLE = "review_case_flags"
WRITTEN, DELETED = TABLE, f"{TABLE}_deleted"  # the counters' rows in review_log_versions


def _bump(log: str) -> str:
    return f"UPDATE review_log_versions SET version = version + 1 WHERE log = '{log}'"


COUNTER = f"(SELECT version FROM review_log_versions WHERE log = '{WRITTEN}')"
SAME_ROW = "bank_id = NEW.bank_id AND case_kind = NEW.case_kind AND case_id = NEW.case_id"
POSTGRES = (  # (name, when, level, body)
    ("written", "BEFORE INSERT OR UPDATE", "STATEMENT", f"{_bump(WRITTEN)}; RETURN NULL;"),
    ("row", "BEFORE INSERT OR UPDATE", "ROW", f"NEW.change_seq := {COUNTER}; RETURN NEW;"),
    ("deleted", "AFTER DELETE OR TRUNCATE", "STATEMENT", f"{_bump(DELETED)}; RETURN NULL;"),
)
SQLITE = {  # trigger name suffix -> (event, body)
    "inserted": ("INSERT", [_bump(WRITTEN), f"UPDATE {TABLE} SET change_seq = {COUNTER} WHERE {SAME_ROW}"]),
    "updated": ("UPDATE OF flags", [_bump(WRITTEN), f"UPDATE {TABLE} SET change_seq = {COUNTER} WHERE {SAME_ROW}"]),
    "deleted": ("DELETE", [_bump(DELETED)]),
}


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("change_seq", sa.BigInteger, nullable=False, server_default="0"))
    op.create_index(f"ix_{TABLE}_changes", TABLE, ["bank_id", "case_kind", "change_seq"])  # the rows written since
    op.execute(f"INSERT INTO review_log_versions (log, version) VALUES ('{WRITTEN}', 0), ('{DELETED}', 0)")
    if op.get_bind().dialect.name == "postgresql":
        for name, when, level, body in POSTGRES:
            function = f"{TABLE}_{name}"
            op.execute(f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body} END $$")
            op.execute(f"CREATE TRIGGER {function} {when} ON {TABLE} FOR EACH {level} EXECUTE FUNCTION {function}()")
    else:
        for suffix, (event, body) in SQLITE.items():
            op.execute(f"CREATE TRIGGER {TABLE}_{suffix} AFTER {event} ON {TABLE} BEGIN {'; '.join(body)}; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name, *_ in POSTGRES:
            op.execute(f"DROP TRIGGER {TABLE}_{name} ON {TABLE}")
            op.execute(f"DROP FUNCTION {TABLE}_{name}()")
    else:
        for suffix in SQLITE:
            op.execute(f"DROP TRIGGER {TABLE}_{suffix}")
    op.execute(f"DELETE FROM review_log_versions WHERE log IN ('{WRITTEN}', '{DELETED}')")
    op.drop_index(f"ix_{TABLE}_changes", TABLE)
    op.drop_column(TABLE, "change_seq")

"""What the Overview counts of each decision, as plain columns beside its JSON: the day it was made, overridden or
not, the reason and (exceptions) the vendor. Counting a million standing decisions by these is a grouped read of
columns; read out of the JSON it took ~1.6 s on PostgreSQL (docs/scaling.md). Existing rows are filled from their
JSON here; Outbox.record writes them from then on.

Revision ID: 0010_decision_report_columns
Revises: 0009_decision_log_version
"""

import sqlalchemy as sa
from alembic import op

revision = "0010_decision_report_columns"
down_revision = "0009_decision_log_version"
branch_labels = None
depends_on = None

COLUMNS = ("decided_on", "overridden", "reason_code", "vendor")
# The first `vendor:` tag of the retained record, as dashboard.hindsight.wire.tag_value reads it.
VENDOR = {
    "postgresql": "(SELECT substr(t.value, 8) FROM json_array_elements_text(record -> 'tags') WITH ORDINALITY AS t(value, n)"
    " WHERE t.value LIKE 'vendor:%' ORDER BY t.n LIMIT 1)",
    "sqlite": "(SELECT substr(value, 8) FROM json_each(record, '$.tags') WHERE value LIKE 'vendor:%' ORDER BY key LIMIT 1)",
}
FILL = {
    "postgresql": "UPDATE review_decisions SET decided_on = CAST(substr(decision ->> 'decided_at', 1, 10) AS DATE),"
    " overridden = COALESCE(CAST(decision ->> 'overridden' AS BOOLEAN), false), reason_code = decision ->> 'reason_code',"
    " vendor = CASE WHEN case_kind = 'exception' THEN {vendor} END",
    "sqlite": "UPDATE review_decisions SET decided_on = substr(json_extract(decision, '$.decided_at'), 1, 10),"
    " overridden = COALESCE(json_extract(decision, '$.overridden'), 0), reason_code = json_extract(decision, '$.reason_code'),"
    " vendor = CASE WHEN case_kind = 'exception' THEN {vendor} END",
}


def upgrade() -> None:
    # plain ALTERs: a batch table copy on SQLite would drop the log-version triggers of 0009
    op.add_column("review_decisions", sa.Column("decided_on", sa.Date, nullable=True))
    op.add_column("review_decisions", sa.Column("overridden", sa.Boolean, nullable=True))
    op.add_column("review_decisions", sa.Column("reason_code", sa.String(200), nullable=True))
    op.add_column("review_decisions", sa.Column("vendor", sa.String(200), nullable=True))
    dialect = op.get_bind().dialect.name
    op.execute(FILL[dialect].format(vendor=VENDOR[dialect]))


def downgrade() -> None:
    for column in COLUMNS:
        op.drop_column("review_decisions", column)

"""The per-case flags as JSONB on PostgreSQL: the Overview counts them in SQL (review/flag_counts.py), and every `->`
on a JSON (text) column parses the document again; on 100,000 cases JSONB made those counts ~4x faster
(docs/scaling.md). SQLite keeps its JSON text.

Revision ID: 0011_case_flags_jsonb
Revises: 0010_decision_report_columns
"""

from alembic import op

revision = "0011_case_flags_jsonb"
down_revision = "0010_decision_report_columns"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE review_case_flags ALTER COLUMN flags TYPE jsonb USING flags::jsonb")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE review_case_flags ALTER COLUMN flags TYPE json USING flags::json")

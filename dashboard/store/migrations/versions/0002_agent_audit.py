"""Agent runs and the audit-log projection.

Revision ID: 0002_agent_audit
Revises: 0001_review_store
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_agent_audit"
down_revision = "0001_review_store"
branch_labels = None
depends_on = None

ID = 200
TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "agent_runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False, unique=True),
        sa.Column("bank_id", sa.String(ID), nullable=False),
        sa.Column("case_kind", sa.String(20), nullable=False),
        sa.Column("case_id", sa.String(ID), nullable=False),
        sa.Column("agent", sa.String(20), nullable=False),
        sa.Column("variant", sa.String(20), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("ended_at", TZ, nullable=False),
        sa.Column("audit_log", sa.Boolean, nullable=False),
        sa.Column("recalls", sa.JSON, nullable=False),
        sa.Column("output", sa.JSON, nullable=False),
        sa.Column("cited", sa.JSON, nullable=False),
    )
    op.create_index("ix_agent_runs_case", "agent_runs", ["case_kind", "case_id"])
    op.create_table(
        "audit_recalls",
        sa.Column("entry_id", sa.String(64), primary_key=True),
        sa.Column("bank_id", sa.String(ID), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("tags_match", sa.String(20), nullable=True),
        sa.Column("results", sa.JSON, nullable=False),
        sa.Column("text_hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_audit_recalls_bank_time", "audit_recalls", ["bank_id", "started_at"])
    op.create_table(
        "audit_sync_state",
        sa.Column("bank_id", sa.String(ID), primary_key=True),
        sa.Column("synced_until", TZ, nullable=True),
        sa.Column("entries", sa.Integer, nullable=False, server_default="0"),
    )


def downgrade() -> None:
    op.drop_table("audit_sync_state")
    op.drop_index("ix_audit_recalls_bank_time", table_name="audit_recalls")
    op.drop_table("audit_recalls")
    op.drop_index("ix_agent_runs_case", table_name="agent_runs")
    op.drop_table("agent_runs")

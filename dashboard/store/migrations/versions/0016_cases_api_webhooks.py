"""Any agent hands a case in and learns the decision: the queue's handed-in cases, API tokens (only their hashes),
webhook events with their delivery columns and attempts, and named cursors (store/schema.py describes each).

Revision ID: 0016_cases_api_webhooks
Revises: 0015_kind_neutral_columns
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_cases_api_webhooks"
down_revision = "0015_kind_neutral_columns"
branch_labels = None
depends_on = None

ID, NAME = 200, 120


def _delivery_columns() -> list[sa.Column]:
    return [
        sa.Column("state", sa.String(20), nullable=False, server_default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_owner", sa.String(NAME), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
    ]


def upgrade() -> None:
    op.create_table(
        "review_cases",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("case_kind", sa.String(20), nullable=False),
        sa.Column("case_id", sa.String(ID), nullable=False),
        sa.Column("fields", sa.JSON, nullable=False),
        sa.Column("agent", sa.JSON, nullable=True),
        sa.Column("body_sha256", sa.String(64), nullable=False),
        sa.Column("source", sa.String(NAME), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("case_kind", "case_id", name="uq_review_cases_case"),
    )
    op.create_index("ix_review_cases_kind_seq", "review_cases", ["case_kind", "seq"])
    op.create_table(
        "review_api_tokens",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(NAME), nullable=False, unique=True),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("kinds", sa.JSON, nullable=False),
        sa.Column("scopes", sa.JSON, nullable=False),
        sa.Column("created_by", sa.String(NAME), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "review_webhook_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("bank_id", sa.String(ID), nullable=False),
        sa.Column("document_id", sa.String(ID + 40), nullable=False, unique=True),
        sa.Column("case_kind", sa.String(20), nullable=False),
        sa.Column("case_id", sa.String(ID), nullable=False),
        sa.Column("decision_id", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        *_delivery_columns(),
    )
    op.create_index("ix_review_webhook_events_due", "review_webhook_events", ["state", "next_attempt_at"])
    op.create_index("ix_review_webhook_events_case", "review_webhook_events", ["case_kind", "case_id"])
    op.create_table(
        "review_webhook_attempts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("event_id", sa.Integer, sa.ForeignKey("review_webhook_events.id"), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status_code", sa.Integer, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
    )
    op.create_index("ix_review_webhook_attempts_event", "review_webhook_attempts", ["event_id"])
    op.create_table(
        "review_cursors",
        sa.Column("name", sa.String(80), primary_key=True),
        sa.Column("value", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("review_cursors")
    op.drop_index("ix_review_webhook_attempts_event", "review_webhook_attempts")
    op.drop_table("review_webhook_attempts")
    op.drop_index("ix_review_webhook_events_case", "review_webhook_events")
    op.drop_index("ix_review_webhook_events_due", "review_webhook_events")
    op.drop_table("review_webhook_events")
    op.drop_table("review_api_tokens")
    op.drop_index("ix_review_cases_kind_seq", "review_cases")
    op.drop_table("review_cases")

"""The review store: decisions with their delivery state, claims, comments, per-case flags.

Revision ID: 0001_review_store
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_review_store"
down_revision = None
branch_labels = None
depends_on = None

ID, NAME = 200, 120
TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "review_decisions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("bank_id", sa.String(ID), nullable=False),
        sa.Column("case_kind", sa.String(20), nullable=False),
        sa.Column("case_id", sa.String(ID), nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("document_id", sa.String(ID + 40), nullable=False),
        sa.Column("reviewer", sa.String(NAME), nullable=False),
        sa.Column("decision", sa.JSON, nullable=False),
        sa.Column("record", sa.JSON, nullable=False),
        sa.Column("evidence", sa.JSON, nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("state", sa.String(20), nullable=False, server_default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("next_attempt_at", TZ, nullable=False),
        sa.Column("lease_owner", sa.String(NAME), nullable=True),
        sa.Column("lease_until", TZ, nullable=True),
        sa.Column("delivered_at", TZ, nullable=True),
        sa.UniqueConstraint("bank_id", "case_kind", "case_id", "revision", name="uq_review_decisions_case_revision"),
    )
    op.create_index("ix_review_decisions_due", "review_decisions", ["state", "next_attempt_at"])
    op.create_index("ix_review_decisions_document", "review_decisions", ["bank_id", "document_id"])
    op.create_table(
        "review_claims",
        sa.Column("bank_id", sa.String(ID), primary_key=True),
        sa.Column("case_kind", sa.String(20), primary_key=True),
        sa.Column("case_id", sa.String(ID), primary_key=True),
        sa.Column("holder", sa.String(NAME), nullable=False),
        sa.Column("claimed_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
    )
    op.create_table(
        "review_comments",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("bank_id", sa.String(ID), nullable=False),
        sa.Column("case_kind", sa.String(20), nullable=False),
        sa.Column("case_id", sa.String(ID), nullable=False),
        sa.Column("author", sa.String(NAME), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_index("ix_review_comments_case", "review_comments", ["bank_id", "case_kind", "case_id"])
    op.create_table(
        "review_case_flags",
        sa.Column("bank_id", sa.String(ID), primary_key=True),
        sa.Column("case_kind", sa.String(20), primary_key=True),
        sa.Column("case_id", sa.String(ID), primary_key=True),
        sa.Column("flags", sa.JSON, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("review_case_flags")
    op.drop_index("ix_review_comments_case", table_name="review_comments")
    op.drop_table("review_comments")
    op.drop_table("review_claims")
    op.drop_index("ix_review_decisions_document", table_name="review_decisions")
    op.drop_index("ix_review_decisions_due", table_name="review_decisions")
    op.drop_table("review_decisions")

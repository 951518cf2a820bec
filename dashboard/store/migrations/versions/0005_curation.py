"""Four-eyes curation of documents: the append-only log, approvals delivered like decisions.

Revision ID: 0005_curation
Revises: 0004_approvals
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_curation"
down_revision = "0004_approvals"
branch_labels = None
depends_on = None

ID, NAME = 200, 120
TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "review_curation",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("bank_id", sa.String(ID), nullable=False),
        sa.Column("document_id", sa.String(ID + 40), nullable=False),
        sa.Column("revision", sa.Integer, nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("change", sa.String(20), nullable=False),
        sa.Column("label", sa.String(40), nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("actor", sa.String(NAME), nullable=False),
        sa.Column("proposal_id", sa.Integer, nullable=True),
        sa.Column("before", sa.String(40), nullable=False),
        sa.Column("after", sa.String(40), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("state", sa.String(20), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("next_attempt_at", TZ, nullable=True),
        sa.Column("lease_owner", sa.String(NAME), nullable=True),
        sa.Column("lease_until", TZ, nullable=True),
        sa.Column("delivered_at", TZ, nullable=True),
        sa.UniqueConstraint("bank_id", "document_id", "revision", name="uq_review_curation_document_revision"),
    )
    op.create_index("ix_review_curation_due", "review_curation", ["state", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_review_curation_due", table_name="review_curation")
    op.drop_table("review_curation")

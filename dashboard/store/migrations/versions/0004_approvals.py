"""Four-eyes release: the steps of a decision held above its reviewer's approval limit.

Revision ID: 0004_approvals
Revises: 0003_generations
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_approvals"
down_revision = "0003_generations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_approvals",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("decision_id", sa.Integer, sa.ForeignKey("review_decisions.id"), nullable=False),
        sa.Column("step", sa.String(20), nullable=False),
        sa.Column("actor", sa.String(120), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("amount", sa.Float, nullable=False),
        sa.Column("limit", sa.Float, nullable=True),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_review_approvals_decision", "review_approvals", ["decision_id"])


def downgrade() -> None:
    op.drop_index("ix_review_approvals_decision", "review_approvals")
    op.drop_table("review_approvals")

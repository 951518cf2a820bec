"""Blind second review: the second reviewer's and the lead's decisions on a sampled first decision.

Revision ID: 0007_second_review
Revises: 0006_relevance_labels
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_second_review"
down_revision = "0006_relevance_labels"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_second_reviews",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("decision_id", sa.Integer, sa.ForeignKey("review_decisions.id"), nullable=False),
        sa.Column("step", sa.String(20), nullable=False),
        sa.Column("actor", sa.String(120), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("decision", sa.JSON, nullable=False),
        sa.Column("lead_decision_id", sa.Integer, sa.ForeignKey("review_decisions.id"), nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_review_second_reviews_decision", "review_second_reviews", ["decision_id"])


def downgrade() -> None:
    op.drop_index("ix_review_second_reviews_decision", "review_second_reviews")
    op.drop_table("review_second_reviews")

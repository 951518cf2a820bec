"""Reviewers' relevance labels on evidence cards: an append-only table.

Revision ID: 0006_relevance_labels
Revises: 0005_curation
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_relevance_labels"
down_revision = "0005_curation"
branch_labels = None
depends_on = None

ID, NAME = 200, 120


def upgrade() -> None:
    op.create_table(
        "review_relevance_labels",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("bank_id", sa.String(ID), nullable=False),
        sa.Column("case_kind", sa.String(20), nullable=False),
        sa.Column("case_id", sa.String(ID), nullable=False),
        sa.Column("document_id", sa.String(ID + 40), nullable=False),
        sa.Column("label", sa.String(20), nullable=False),
        sa.Column("reviewer", sa.String(NAME), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("query", sa.Text, nullable=True),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("tags_match", sa.String(20), nullable=True),
        sa.Column("ranked", sa.JSON, nullable=False),
    )
    op.create_index(
        "ix_review_relevance_labels_case",
        "review_relevance_labels",
        ["bank_id", "case_kind", "case_id", "document_id", "reviewer"],
    )


def downgrade() -> None:
    op.drop_index("ix_review_relevance_labels_case", table_name="review_relevance_labels")
    op.drop_table("review_relevance_labels")

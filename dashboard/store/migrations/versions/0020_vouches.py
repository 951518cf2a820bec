"""A lead's vouching for memory records of unknown origin (origin/vouching.py): the proposal and its four-eyes
confirmation, and the documents a confirmation covered, each with its text's digest.

Revision ID: 0020_vouches
Revises: 0019_withdrawn_cases
"""

import sqlalchemy as sa
from alembic import op

revision = "0020_vouches"
down_revision = "0019_withdrawn_cases"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "review_vouches",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("bank_id", sa.String(200), nullable=False),
        sa.Column("document_id", sa.String(240), nullable=True),
        sa.Column("written_before", TZ, nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("proposed_by", sa.String(120), nullable=False),
        sa.Column("proposer_id", sa.String(520), nullable=True),
        sa.Column("proposed_at", TZ, nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("settled_by", sa.String(120), nullable=True),
        sa.Column("settler_id", sa.String(520), nullable=True),
        sa.Column("settled_at", TZ, nullable=True),
        sa.Column("documents", sa.Integer, nullable=True),
    )
    op.create_table(
        "review_vouched_documents",
        sa.Column("bank_id", sa.String(200), primary_key=True),
        sa.Column("document_id", sa.String(240), primary_key=True),
        sa.Column("vouch_id", sa.Integer, primary_key=True),
        sa.Column("text_sha256", sa.String(64), nullable=False),
        sa.Column("written_at", TZ, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("review_vouched_documents")
    op.drop_table("review_vouches")

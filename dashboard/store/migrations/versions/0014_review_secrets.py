"""The deployment's secrets: the key this dashboard signs the memory records it writes with (origin/provenance.py),
kept in the review store so every instance on one store signs and verifies alike.

Revision ID: 0014_review_secrets
Revises: 0013_case_flags_changes
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_review_secrets"
down_revision = "0013_case_flags_changes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_secrets",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("review_secrets")

"""Freshness across instances: a generation per (bank, scope), bumped by every decision.

Revision ID: 0003_generations
Revises: 0002_agent_audit
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_generations"
down_revision = "0002_agent_audit"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_generations",
        sa.Column("bank_id", sa.String(200), primary_key=True),
        sa.Column("scope", sa.String(200), primary_key=True),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("review_generations")

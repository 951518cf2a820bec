"""A handed-in case can be withdrawn by its agent while it is open: who withdrew it, why and when, kept on its row (the
case leaves the queue; the API still answers for it, as withdrawn).

Revision ID: 0019_withdrawn_cases
Revises: 0018_audit_sync_progress
"""

import sqlalchemy as sa
from alembic import op

revision = "0019_withdrawn_cases"
down_revision = "0018_audit_sync_progress"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("review_cases", sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("review_cases", sa.Column("withdrawn_by", sa.String(120), nullable=True))
    op.add_column("review_cases", sa.Column("withdrawn_why", sa.Text, nullable=True))


def downgrade() -> None:
    for name in ("withdrawn_why", "withdrawn_by", "withdrawn_at"):
        op.drop_column("review_cases", name)

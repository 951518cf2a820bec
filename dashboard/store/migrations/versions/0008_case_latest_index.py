"""An index for the newest decision per case (Outbox.latest_per_case): the queue pages read it on every run.

Revision ID: 0008_case_latest_index
Revises: 0007_second_review
"""

from alembic import op

revision = "0008_case_latest_index"
down_revision = "0007_second_review"
branch_labels = None
depends_on = None

COLUMNS = ["bank_id", "case_kind", "case_id", "state", "id"]


def upgrade() -> None:
    op.create_index("ix_review_decisions_case_latest", "review_decisions", COLUMNS)


def downgrade() -> None:
    op.drop_index("ix_review_decisions_case_latest", "review_decisions")

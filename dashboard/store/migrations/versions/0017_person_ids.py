"""Real identity: beside each name a person acted under, the signed-in person's issuer and subject (NULL for a typed
name), so the four-eyes rules compare people, not names (store/identity.py); an API token's owner and the role it
acts in, so the CLI acts as a token's owner when sign-in is on.

Revision ID: 0017_person_ids
Revises: 0016_cases_api_webhooks
"""

import sqlalchemy as sa
from alembic import op

revision = "0017_person_ids"
down_revision = "0016_cases_api_webhooks"
branch_labels = None
depends_on = None

PERSON_ID = 520
TABLES = (
    "review_claims",
    "review_comments",
    "review_approvals",
    "review_curation",
    "review_relevance_labels",
    "review_second_reviews",
)


def upgrade() -> None:
    for table in (*TABLES, "review_api_tokens"):
        op.add_column(table, sa.Column("person_id", sa.String(PERSON_ID), nullable=True))
    op.add_column("review_api_tokens", sa.Column("role", sa.String(20), nullable=True))


def downgrade() -> None:
    # Not batch mode: SQLite (3.35+) drops a column in place, so the standing triggers on these tables stay.
    op.execute("ALTER TABLE review_api_tokens DROP COLUMN role")
    for table in (*TABLES, "review_api_tokens"):
        op.execute(f"ALTER TABLE {table} DROP COLUMN person_id")

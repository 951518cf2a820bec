"""The review store names no queue kind: what 0010 and 0012 wrote for two kinds by name becomes kind-neutral.

- `vendor` (decisions and standing) becomes `report_group`: the record's first tag its kind groups overrides by
  (`ReviewerDecision.report_by`), "" when the record names none; NULL for a kind that does not group. Exceptions were
  the kind grouped by vendor, so their decisions are given `report_by: "vendor"` and an untagged one "".
- the standing table's `ticket_action` becomes `action`, and a decision's `ticket_action` and `final_response` become
  its kind-neutral `action` (with `action_words`, as the buttons said them) and `details.response`.
- the standing triggers are made again (migrations/standing_triggers.py) with these columns.

Revision ID: 0015_kind_neutral_columns
Revises: 0014_review_secrets
"""

from alembic import op

from dashboard.store.migrations.standing_triggers import COUNTER, TABLE, StandingTriggers, drop_triggers

revision = "0015_kind_neutral_columns"
down_revision = "0014_review_secrets"
branch_labels = None
depends_on = None

# The kinds as this revision found them (support.decisions' words for a ticket's actions, then).
GROUPED_KIND, GROUPED_BY = "exception", "vendor"
ACTION_WORDS = {
    "approve": "the drafted response sent as it is",
    "edit_and_approve": "the drafted response edited, then sent",
    "override": "the draft replaced by the reviewer's own response",
}
DECISION_TABLES = ("review_decisions", "review_second_reviews")

COLUMNS = (
    "bank_id",
    "case_kind",
    "case_id",
    "decision_id",
    "state",
    "outcome",
    "action",
    "decided_on",
    "overridden",
    "reason_code",
    "report_group",
    "agent_confidence",
    "change_seq",
)
VALUES = {
    "postgresql": "r.bank_id, r.case_kind, r.case_id, r.id, r.state, r.decision ->> 'outcome', r.decision ->> 'action',"
    f" r.decided_on, r.overridden, r.reason_code, r.report_group, r.record -> 'metadata' ->> 'agent_confidence', {COUNTER}",
    "sqlite": "r.bank_id, r.case_kind, r.case_id, r.id, r.state, json_extract(r.decision, '$.outcome'),"
    " json_extract(r.decision, '$.action'), r.decided_on, r.overridden, r.reason_code, r.report_group,"
    f" json_extract(r.record, '$.metadata.agent_confidence'), {COUNTER}",
}


def _words(action: str) -> str:
    cases = " ".join(
        f"WHEN '{name}' THEN '{words.replace(chr(39), chr(39) * 2)}'" for name, words in ACTION_WORDS.items()
    )
    return f"CASE {action} {cases} END"


def _neutral_json(dialect: str) -> str:
    """A decision's JSON with its kind-named fields moved to the kind-neutral ones."""
    if dialect == "postgresql":
        action, response, kind = (
            "decision ->> 'ticket_action'",
            "decision ->> 'final_response'",
            "decision ->> 'case_kind'",
        )
        return (
            f"((decision::jsonb - 'ticket_action' - 'final_response') || jsonb_build_object("
            f"'action', {action}, 'action_words', {_words(action)},"
            f" 'details', CASE WHEN {response} IS NULL THEN '{{}}'::jsonb ELSE jsonb_build_object('response', {response}) END,"
            f" 'report_by', CASE WHEN {kind} = '{GROUPED_KIND}' THEN '{GROUPED_BY}' END))::json"
        )
    action, response, kind = (
        "json_extract(decision, '$.ticket_action')",
        "json_extract(decision, '$.final_response')",
        "json_extract(decision, '$.case_kind')",
    )
    return (
        f"json_set(json_remove(decision, '$.ticket_action', '$.final_response'), '$.action', {action},"
        f" '$.action_words', {_words(action)},"
        f" '$.details', json(CASE WHEN {response} IS NULL THEN '{{}}' ELSE json_object('response', {response}) END),"
        f" '$.report_by', CASE WHEN {kind} = '{GROUPED_KIND}' THEN '{GROUPED_BY}' END)"
    )


def _named_json(dialect: str) -> str:
    """The reverse of _neutral_json."""
    if dialect == "postgresql":
        return (
            "((decision::jsonb - 'action' - 'action_words' - 'details' - 'report_by') || jsonb_build_object("
            "'ticket_action', decision ->> 'action', 'final_response', decision -> 'details' ->> 'response'))::json"
        )
    return (
        "json_set(json_remove(decision, '$.action', '$.action_words', '$.details', '$.report_by'),"
        " '$.ticket_action', json_extract(decision, '$.action'), '$.final_response', json_extract(decision, '$.details.response'))"
    )


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    for statement in drop_triggers(dialect):
        op.execute(statement)
    for table in DECISION_TABLES:
        op.execute(f"UPDATE {table} SET decision = {_neutral_json(dialect)}")
    for table in ("review_decisions", TABLE):
        op.execute(f"ALTER TABLE {table} RENAME COLUMN vendor TO report_group")
        op.execute(f"UPDATE {table} SET report_group = '' WHERE case_kind = '{GROUPED_KIND}' AND report_group IS NULL")
    op.execute(f"ALTER TABLE {TABLE} RENAME COLUMN ticket_action TO action")
    for statement in StandingTriggers(COLUMNS, VALUES).create(dialect):
        op.execute(statement)


def downgrade() -> None:
    from importlib import import_module  # 0012's column list, to make its triggers again

    before = import_module("dashboard.store.migrations.versions.0012_standing_decisions")
    dialect = op.get_bind().dialect.name
    for statement in drop_triggers(dialect):
        op.execute(statement)
    op.execute(f"ALTER TABLE {TABLE} RENAME COLUMN action TO ticket_action")
    for table in ("review_decisions", TABLE):
        op.execute(f"UPDATE {table} SET report_group = NULL WHERE report_group = ''")
        op.execute(f"ALTER TABLE {table} RENAME COLUMN report_group TO vendor")
    for table in DECISION_TABLES:
        op.execute(f"UPDATE {table} SET decision = {_named_json(dialect)}")
    for statement in before.TRIGGERS.create(dialect):
        op.execute(statement)

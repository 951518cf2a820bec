"""The review store's tables (SQLAlchemy Core). Alembic migrations create them; code queries them.

Decisions are append-only: a revised decision is a new row whose `revision` is one more than the
case's latest, and (bank, kind, case, revision) is unique, so two reviewers racing on one revision
cannot both land. Only the delivery columns of a row change after it is written (and the state of a row
held for a second approval: `awaiting_approval` becomes `pending` when confirmed, `returned` when rejected;
each step is a row of `review_approvals`).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB

from dashboard.store.db import metadata

ID = 200  # case ids, bank ids, document ids: the import limit is lower, this is the column's
NAME = 120  # reviewer names and claim holders
PERSON_ID = 520  # identity.Person.id: "<issuer> <subject>" of a signed-in person (NULL: a typed name)

# Delivery states of a decision row.
PENDING, DELIVERED, SUPERSEDED, FAILED, DISCARDED = "pending", "delivered", "superseded", "failed", "discarded"
# A decision above its reviewer's approval limit: never delivered, never a human decision, until confirmed.
AWAITING, RETURNED = "awaiting_approval", "returned"
APPROVAL_HELD = (AWAITING, RETURNED)
# A first decision sampled for a blind second review (review/second_review.py): held like one above a limit,
# then `awaiting_lead` when the second reviewer decided otherwise; `superseded` once the lead decides (every
# state name fits the 20-character column).
AWAITING_SECOND, AWAITING_LEAD = "awaiting_second", "awaiting_lead"
SECOND_HELD = (AWAITING_SECOND, AWAITING_LEAD)
HELD = (*APPROVAL_HELD, *SECOND_HELD)


def delivery_columns() -> tuple[Column, ...]:
    """The columns a table delivered by store/delivery_queue.py's DeliveryQueue needs (the decisions, the webhook events)."""
    return (
        Column("state", String(20), nullable=False, server_default=PENDING),
        Column("attempts", Integer, nullable=False, server_default="0"),
        Column("last_error", Text, nullable=True),
        Column("next_attempt_at", DateTime(timezone=True), nullable=False),
        Column("lease_owner", String(NAME), nullable=True),
        Column("lease_until", DateTime(timezone=True), nullable=True),
        Column("delivered_at", DateTime(timezone=True), nullable=True),
    )


def case_key() -> tuple[Column, ...]:
    """The primary key of a table with one row per case: (bank, kind, case id)."""
    return (
        Column("bank_id", String(ID), primary_key=True),
        Column("case_kind", String(20), primary_key=True),
        Column("case_id", String(ID), primary_key=True),
    )


decisions = Table(
    "review_decisions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bank_id", String(ID), nullable=False),
    Column("case_kind", String(20), nullable=False),
    Column("case_id", String(ID), nullable=False),
    Column("revision", Integer, nullable=False),  # 1 for the first decision on a case, then 2, 3 ...
    Column("document_id", String(ID + 40), nullable=False),
    Column("reviewer", String(NAME), nullable=False),
    Column("decision", JSON, nullable=False),  # ReviewerDecision
    Column("record", JSON, nullable=False),  # MemoryRecord: exactly what is retained
    Column("evidence", JSON, nullable=True),  # EvidenceSnapshot: what the reviewer saw
    Column("created_at", DateTime(timezone=True), nullable=False),
    # what the Overview counts, copied out of decision and record when the row is written (migration 0010)
    Column("decided_on", Date, nullable=True),  # decision.decided_at's date
    Column("overridden", Boolean, nullable=True),
    Column("reason_code", String(ID), nullable=True),
    # what its kind groups overrides by: the record's first tag named by decision.report_by (finance: its vendor);
    # "" when the record has none (the queue names it), NULL when the kind does not group (migration 0015)
    Column("report_group", String(ID), nullable=True),
    *delivery_columns(),  # delivery
    UniqueConstraint("bank_id", "case_kind", "case_id", "revision", name="uq_review_decisions_case_revision"),
    Index("ix_review_decisions_due", "state", "next_attempt_at"),
    Index("ix_review_decisions_document", "bank_id", "document_id"),
    # a case's decisions, newest first (Outbox.latest_decided)
    Index("ix_review_decisions_case_latest", "bank_id", "case_kind", "case_id", "state", "id"),
)

# Each case's standing decision (its newest not held), one row per case, kept by the database's triggers on the
# decision log (migration 0012): what the queue pages and the Overview read instead of grouping the log.
standing_decisions = Table(
    "review_standing_decisions",
    metadata,
    *case_key(),
    Column("decision_id", Integer, nullable=False, index=True),
    Column("state", String(20), nullable=False),
    Column("outcome", String(40), nullable=True),
    Column("action", String(40), nullable=True),  # decision.action
    Column("decided_on", Date, nullable=True),
    Column("overridden", Boolean, nullable=True),
    Column("reason_code", String(ID), nullable=True),
    Column("report_group", String(ID), nullable=True),
    Column("agent_confidence", String(40), nullable=True),  # the retained record's metadata, as written (text)
    Column(
        "change_seq", BigInteger, nullable=False
    ),  # the table's change count when the row was written: read what changed since
    Index("ix_review_standing_decisions_changes", "bank_id", "case_kind", "change_seq"),
)

claims = Table(
    "review_claims",
    metadata,
    *case_key(),
    Column("holder", String(NAME), nullable=False),
    Column("person_id", String(PERSON_ID), nullable=True),
    Column("claimed_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

comments = Table(
    "review_comments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bank_id", String(ID), nullable=False),
    Column("case_kind", String(20), nullable=False),
    Column("case_id", String(ID), nullable=False),
    Column("author", String(NAME), nullable=False),
    Column("person_id", String(PERSON_ID), nullable=True),
    Column("body", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_review_comments_case", "bank_id", "case_kind", "case_id"),
)

# Per-case figures the Overview computes from recalls (crowd-out, legacy admission), kept across restarts
# and shared by every instance.
case_flags = Table(
    "review_case_flags",
    metadata,
    *case_key(),
    Column("flags", JSON().with_variant(JSONB(), "postgresql"), nullable=False),  # JSONB: read in SQL (migration 0011)
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # the table's change count when the row was written, set by the database (migration 0013): read what changed since
    Column("change_seq", BigInteger, nullable=False, server_default="0"),
    Index("ix_review_case_flags_changes", "bank_id", "case_kind", "change_seq"),
)

# A generation per (bank, scope): a decision bumps its scope's (a vendor and type, a customer), and every
# instance reads it when a case opens, so a recall cached before the decision is made again.
generations = Table(
    "review_generations",
    metadata,
    Column("bank_id", String(ID), primary_key=True),
    Column("scope", String(ID), primary_key=True),
    Column("generation", Integer, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# One row per log: its version, moved by the database's triggers on every change (migration 0009: the decision
# log and its approval steps), so a reader can keep what it read until the log changed.
log_versions = Table(
    "review_log_versions",
    metadata,
    Column("log", String(40), primary_key=True),
    Column("version", BigInteger, nullable=False),
)

# The append-only steps of a four-eyes release: "proposed" (with the amount and the proposer's limit),
# then "confirmed" or "rejected" by a second approver.
approvals = Table(
    "review_approvals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("decision_id", Integer, ForeignKey("review_decisions.id"), nullable=False),
    Column("step", String(20), nullable=False),
    Column("actor", String(NAME), nullable=False),
    Column("person_id", String(PERSON_ID), nullable=True),
    Column("role", String(20), nullable=False),
    Column("amount", Float, nullable=False),
    Column("limit", Float, nullable=True),  # the actor's limit; None: no limit
    Column("scope", String(ID), nullable=False),  # the decision's recall scope, bumped when it is released
    Column("note", Text, nullable=False, server_default=""),
    Column("at", DateTime(timezone=True), nullable=False),
    Index("ix_review_approvals_decision", "decision_id"),
)

# Four-eyes curation of a document's memories (review.curation): an append-only log per document. A proposal
# row, then the lead's approve or reject row naming it; (bank, document, revision) is unique, so two people
# acting on one document at once cannot both land. An approve row is delivered like a decision (the same
# delivery columns; NULL state on the rows that send nothing, which therefore never supersede an approval), and
# only its delivery columns change later.
curation = Table(
    "review_curation",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bank_id", String(ID), nullable=False),
    Column("document_id", String(ID + 40), nullable=False),
    Column("revision", Integer, nullable=False),  # 1 for the document's first event, then 2, 3 ...
    Column("action", String(20), nullable=False),  # propose | approve | reject
    Column("change", String(20), nullable=False),  # invalidate | revert
    Column("label", String(40), nullable=True),  # wrong | outdated | another_customer | duplicate (invalidate)
    Column("reason", Text, nullable=False),  # the proposer's reason; on an approval, the reason sent to Hindsight
    Column("actor", String(NAME), nullable=False),
    Column("person_id", String(PERSON_ID), nullable=True),
    Column("proposal_id", Integer, nullable=True),  # the proposal an approve or reject answers
    Column("before", String(40), nullable=False),  # the document's curation status before and after the event
    Column("after", String(40), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    # delivery (approve rows only)
    Column("state", String(20), nullable=True),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("last_error", Text, nullable=True),
    Column("next_attempt_at", DateTime(timezone=True), nullable=True),
    Column("lease_owner", String(NAME), nullable=True),
    Column("lease_until", DateTime(timezone=True), nullable=True),
    Column("delivered_at", DateTime(timezone=True), nullable=True),
    UniqueConstraint("bank_id", "document_id", "revision", name="uq_review_curation_document_revision"),
    Index("ix_review_curation_due", "state", "next_attempt_at"),
)

# Reviewers' relevance labels on evidence cards (review.relevance): append-only, one row per click; the latest
# row per (bank, case, document, reviewer) counts. The recall request the card came from is kept with the label
# (query, tags, tags_match and the documents it returned, best first), so an export names its provenance.
relevance_labels = Table(
    "review_relevance_labels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bank_id", String(ID), nullable=False),
    Column("case_kind", String(20), nullable=False),
    Column("case_id", String(ID), nullable=False),
    Column("document_id", String(ID + 40), nullable=False),
    Column("label", String(20), nullable=False),  # relevant | not_relevant | wrong
    Column("reviewer", String(NAME), nullable=False),
    Column("person_id", String(PERSON_ID), nullable=True),
    Column("role", String(20), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("query", Text, nullable=True),
    Column("tags", JSON, nullable=False),
    Column("tags_match", String(20), nullable=True),
    Column("ranked", JSON, nullable=False),  # document ids the request returned, best first
    Index("ix_review_relevance_labels_case", "bank_id", "case_kind", "case_id", "document_id", "reviewer"),
)

# The blind second review of a sampled first decision: who made it, in which role ("first"), the second reviewer's
# decision ("second"), and, when it differs,
# the lead's ("lead", naming the decisions row the lead's decision was delivered as). Append-only.
second_reviews = Table(
    "review_second_reviews",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("decision_id", Integer, ForeignKey("review_decisions.id"), nullable=False),  # the first decision
    Column("step", String(20), nullable=False),  # first | second | lead
    Column("actor", String(NAME), nullable=False),
    Column("person_id", String(PERSON_ID), nullable=True),
    Column("role", String(20), nullable=False),
    Column("outcome", String(20), nullable=False),
    Column("decision", JSON, nullable=False),  # ReviewerDecision: the actor's own, with its reason and note
    Column("lead_decision_id", Integer, ForeignKey("review_decisions.id"), nullable=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Index("ix_review_second_reviews_decision", "decision_id"),
)

# The deployment's secrets, one row each (migration 0014): "signing", the key this dashboard signs the records it
# writes with (trust/origin.py), made once by the first process that needs it, so every instance on this store agrees.
# A lead's vouching for memory records of unknown origin (origin/vouching.py, migration 0020_vouches): proposed with who and
# why, confirmed by another lead (four eyes); a confirmed one lists each document it covers with its text's digest.
vouches = Table(
    "review_vouches",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bank_id", String(ID), nullable=False),
    Column("document_id", String(ID + 40), nullable=True),  # one document, or
    Column("written_before", DateTime(timezone=True), nullable=True),  # every document the server wrote before this
    Column("reason", Text, nullable=False),
    Column("proposed_by", String(NAME), nullable=False),
    Column("proposer_id", String(PERSON_ID), nullable=True),
    Column("proposed_at", DateTime(timezone=True), nullable=False),
    Column("state", String(20), nullable=False),  # proposed | confirmed | refused
    Column("settled_by", String(NAME), nullable=True),
    Column("settler_id", String(PERSON_ID), nullable=True),
    Column("settled_at", DateTime(timezone=True), nullable=True),
    Column("documents", Integer, nullable=True),  # how many documents a confirmation covered
)

vouched_documents = Table(
    "review_vouched_documents",
    metadata,
    Column("bank_id", String(ID), primary_key=True),
    Column("document_id", String(ID + 40), primary_key=True),
    Column("vouch_id", Integer, primary_key=True),
    Column("text_sha256", String(64), nullable=False),  # trust/origin.text_digest of its original text when vouched
    Column("written_at", DateTime(timezone=True), nullable=True),  # the server's write time
)

secrets = Table(
    "review_secrets",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("value", String(200), nullable=False),
)

# The queue's cases handed in by agents and imports (review/case_queue.py, migration 0016): one row per (kind, case id),
# written once; the same body again is the same case, another body is a conflict. `seq` orders the queue and is the
# "changed since" cursor of the API.
queued_cases = Table(
    "review_cases",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("case_kind", String(20), nullable=False),
    Column("case_id", String(ID), nullable=False),
    Column("fields", JSON, nullable=False),  # the case as its kind's model validated it
    Column("agent", JSON, nullable=True),  # AgentPart: what the submitting agent recommended, cited and recalled
    Column("body_sha256", String(64), nullable=False),  # of fields and agent: the same body again is the same case
    Column("source", String(NAME), nullable=False),  # "api:<token name>" or "import:<file name>"
    Column("created_at", DateTime(timezone=True), nullable=False),
    # withdrawn by its agent while open (migration 0019): out of the queue, still answered for by the API
    Column("withdrawn_at", DateTime(timezone=True), nullable=True),
    Column("withdrawn_by", String(NAME), nullable=True),
    Column("withdrawn_why", Text, nullable=True),
    UniqueConstraint("case_kind", "case_id", name="uq_review_cases_case"),
    Index("ix_review_cases_kind_seq", "case_kind", "seq"),
)

# API tokens for agents (access/api_tokens.py): only the SHA-256 of a token is kept; each is scoped to kinds and to
# submit and/or read, and revoked rather than deleted, so the audit keeps its name.
api_tokens = Table(
    "review_api_tokens",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(NAME), nullable=False, unique=True),
    Column("token_sha256", String(64), nullable=False, unique=True),
    Column("kinds", JSON, nullable=False),  # kind keys, e.g. ["finance"]
    Column("scopes", JSON, nullable=False),  # "submit", "read"
    Column("created_by", String(NAME), nullable=False),  # its owner: who acts with it (`decide`)
    Column("person_id", String(PERSON_ID), nullable=True),  # a signed-in owner's issuer and subject (migration 0017)
    Column("role", String(20), nullable=True),  # the role it acts in: its owner's when they made it
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True), nullable=True),
    Column("last_used_at", DateTime(timezone=True), nullable=True),
)

# A kind's webhook told of each final decision (delivery/webhooks.py): one event per standing decision, delivered at
# least once with the delivery columns of `review_decisions` (store/delivery_queue.py); `document_id` holds the event's
# idempotency key, unique, so a decision is never queued twice.
webhook_events = Table(
    "review_webhook_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("bank_id", String(ID), nullable=False),
    Column("document_id", String(ID + 40), nullable=False, unique=True),  # the idempotency key
    Column("case_kind", String(20), nullable=False),
    Column("case_id", String(ID), nullable=False),
    Column("decision_id", Integer, nullable=False),
    Column("url", Text, nullable=False),
    Column("body", Text, nullable=False),  # the JSON sent, exactly as signed
    Column("created_at", DateTime(timezone=True), nullable=False),
    *delivery_columns(),
    Index("ix_review_webhook_events_due", "state", "next_attempt_at"),
    Index("ix_review_webhook_events_case", "case_kind", "case_id"),
)

# Every attempt to deliver a webhook event: the Audit page's delivery log.
webhook_attempts = Table(
    "review_webhook_attempts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event_id", Integer, ForeignKey("review_webhook_events.id"), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("status_code", Integer, nullable=True),  # None: no answer
    Column("error", Text, nullable=True),
    Index("ix_review_webhook_attempts_event", "event_id"),
)

# Named positions in the review store's change counters, e.g. how far the webhook dispatcher has read the standing
# decisions' change_seq.
cursors = Table(
    "review_cursors",
    metadata,
    Column("name", String(80), primary_key=True),
    Column("value", BigInteger, nullable=False),
)

"""What one server process holds for every session: the settings, the Hindsight gateway, the review store
(its decision outbox, casework, freshness generations, agent runs), the decision service, the delivery
worker thread and the recall log. Each is made once per process (`st.cache_resource`); the server's
health and mode are read at most every few seconds (`st.cache_data`)."""

from __future__ import annotations

import streamlit as st

from dashboard.delivery.outbox import Outbox
from dashboard.delivery.webhooks import WebhookEvents, post_webhook
from dashboard.delivery.worker import DeliveryWorker
from dashboard.hindsight.errors import HindsightError, HindsightUnavailable
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryMode
from dashboard.kinds import configured, hold_webhook_position, registered, webhook_targets
from dashboard.reporting.home import Overview, build_overview
from dashboard.reporting.recall_log import RecallLog
from dashboard.review.casework import Casework
from dashboard.review.curation import Curation
from dashboard.review.decisions import DecisionService, configured_decision_service
from dashboard.review.freshness import EVERYTHING, Freshness
from dashboard.review.queue_kind import QueueKind
from dashboard.review.relevance import RelevanceLabels
from dashboard.settings import Settings, load_settings
from dashboard.store.agent_runs import AgentRunStore
from dashboard.store.db import make_engine
from dashboard.store.delivery_queue import DeliveryReport


@st.cache_resource
def settings() -> Settings:
    """The settings, every registered queue kind's bank and file filled in (dashboard.kinds.configured)."""
    return configured(load_settings())


@st.cache_resource
def kinds() -> tuple[QueueKind, ...]:
    """The registered queue kinds (dashboard/kinds.py and RECALL_REVIEW_KINDS)."""
    return registered(settings())


@st.cache_resource
def gateway() -> HindsightGateway:
    s = settings()
    return HindsightGateway(s.base_url, s.api_key)


@st.cache_resource
def outbox() -> Outbox:
    """The review store's decisions: SQLite in the data directory, or the team's PostgreSQL (migrated to head)."""
    s = settings()
    return Outbox(make_engine(s.store_url, s.data_dir), signing_key=s.signing_secret)


@st.cache_resource
def casework() -> Casework:
    """Claims, comments and the per-case flags, on the review store's engine."""
    return Casework(outbox().engine)


@st.cache_resource
def freshness() -> Freshness:
    """The decisions' generations per scope, shared by every instance on the same store."""
    return Freshness(outbox().engine)


@st.cache_resource
def curation() -> Curation:
    """Four-eyes curation of documents, on the review store's engine; an approval is delivered at once when it can."""
    return Curation(outbox().engine, gateway().set_document_state, freshness=freshness())


@st.cache_resource
def relevance_labels() -> RelevanceLabels:
    """The reviewers' relevance labels on evidence cards, on the review store's engine."""
    return RelevanceLabels(outbox().engine)


@st.cache_resource
def webhooks() -> WebhookEvents:
    """The webhook events told of each final decision, on the review store's engine, with each kind's configured URL."""
    return WebhookEvents(outbox().engine, targets=webhook_targets(settings()))


@st.cache_resource
def agent_runs() -> AgentRunStore:
    """Agent runs and the audit-log projection, in the same store as the reviewers' decisions."""
    return AgentRunStore(outbox().engine)


@st.cache_resource
def decisions() -> DecisionService:
    """The one way a page records a decision (role, claim, approval limits, outbox, freshness, release)."""
    hold_webhook_position(settings(), outbox().engine)  # what it records is sent to the kinds' webhooks
    return configured_decision_service(
        settings(), outbox(), gateway().retain, casework=casework(), freshness=freshness()
    )


@st.cache_resource
def recall_log() -> RecallLog:
    """Wall times of this process's recalls (the last 500 per kind), for the Overview."""
    return RecallLog()


def _stop_worker(worker: DeliveryWorker | None) -> None:
    if worker is not None:
        worker.stop()


@st.cache_resource(on_release=_stop_worker)
def worker() -> DeliveryWorker | None:
    """This process's delivery worker thread (None when configured off: `python -m dashboard worker` delivers)."""
    s = settings()
    if not s.delivery_worker:
        return None
    fresh = freshness()

    def late_delivery(_report: DeliveryReport) -> None:
        # A decision delivered late changes what the next recall finds: every instance recalls again.
        for bank in s.banks:
            fresh.bump(bank, EVERYTHING)

    also = [(curation(), gateway().set_document_state)]
    if webhooks().targets:  # a worker without webhooks leaves the events to the instances that have them
        also.append((webhooks(), post_webhook))
    return DeliveryWorker(outbox(), gateway().retain, on_delivered=late_delivery, also=also).start()


@st.cache_data(ttl=5, show_spinner=False)
def connection_error() -> str | None:
    """None when Hindsight answers healthy; otherwise what is wrong. Re-checked every 5 s."""
    try:
        answer = gateway().health()
    except HindsightUnavailable as exc:
        return str(exc)
    return None if answer.get("status") == "healthy" else f"Hindsight reports: {answer}"


@st.cache_data(ttl=60, show_spinner=False)
def memory_modes(bank_ids: tuple[str, ...]) -> dict[str, MemoryMode | None]:
    """How the server stores each bank (verbatim or extracting, observations), as it says; None: unknown."""
    modes: dict[str, MemoryMode | None] = {}
    for bank in bank_ids:
        try:
            modes[bank] = gateway().memory_mode(bank)
        except HindsightError:
            modes[bank] = None
    return modes


@st.cache_data(ttl=5, show_spinner=False)
def home_overview() -> Overview:
    """The server, its banks and the queues as Home shows them: the same for every visitor (no one's own data), so one
    read every 5 s serves them all, where each new session asked the server five times before its first figures."""
    return build_overview(gateway(), settings(), kinds())


def signed_retain(kind: str):
    """Retain as this dashboard writes: each record signed as written by `kind` (a migration: origin/provenance.py)."""
    provenance, retain = outbox().provenance, gateway().retain
    return lambda bank_id, records: retain(bank_id, [provenance.sign(r, kind) for r in records])


def redeliver_webhook(event_id: int) -> bool:
    """A lead sends a webhook event again (under its own idempotency key); the worker looks at once."""
    again = webhooks().redeliver(event_id)
    running = worker()
    if again and running is not None:
        running.wake()
    return again


def deliver_now() -> None:
    """Someone pressed "Deliver now": every pending decision and curation approval is due, and the worker looks at once."""
    outbox().retry_now()
    curation().retry_now()
    connection_error.clear()
    running = worker()
    if running is not None:
        running.wake()

"""The tickets' recalls and the support bank's legacy plan: cached per process, fresh across instances.

A ticket's recall is cached under its customer's freshness stamp (a decision for that customer, or a
migration, moves it on every instance). A computed recall keeps the flags of every queued ticket it is
for in the review store; a cache hit writes nothing. The migration's dry run of the bank (which records
are untagged, and whose) is read at most once a minute, and again at once after a migration.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from dashboard.app import resources
from dashboard.app.recall_cache import RecallCache
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.review.freshness import EVERYTHING
from dashboard.support import flags as ticket_flags
from dashboard.support import migration
from dashboard.support.customers import customer_tag, name_key
from dashboard.support.models import Customer, Ticket
from dashboard.support.recall import TicketRecall, recall_for_ticket

logger = logging.getLogger(__name__)


@st.cache_resource
def _cache() -> RecallCache:
    return RecallCache()


def recall_ticket(bank_id: str, customer: str, issue: str) -> TicketRecall:
    """The ticket's recall: its customer's tag first, the legacy fallback when that is empty."""
    stamp = resources.freshness().stamp(bank_id, customer_tag(customer))
    slot = (bank_id, name_key(customer), issue.strip(), stamp)
    found = _cache().get(slot)
    if found is not None:
        return found
    gateway = resources.gateway()
    with resources.recall_log().timed("ticket"):
        found = recall_for_ticket(gateway.recall, bank_id, customer, issue, read_document=gateway.document)
    _cache().put(slot, found)
    _keep_flags(bank_id, issue, found)
    return found


def migrated(bank_id: str) -> None:
    """Records were tagged: every customer's recall and the legacy plan may change, on every instance."""
    resources.freshness().bump(bank_id, EVERYTHING)


@st.cache_data(ttl=60, show_spinner=False)
def _ticket_ids(tickets_file: str) -> dict[tuple[str, str], list[str]]:
    """(customer, issue) -> the ids of the queued tickets that recall is for."""
    try:
        tickets = load_rows(tickets_file, Ticket)
    except QueueFileError:
        return {}
    index: dict[tuple[str, str], list[str]] = {}
    for t in tickets:
        index.setdefault((name_key(t.customer), t.issue.strip()), []).append(t.id)
    return index


def _keep_flags(bank_id: str, issue: str, recall: TicketRecall) -> None:
    ids = _ticket_ids(str(resources.settings().tickets_file)).get((name_key(recall.customer), issue.strip()), [])
    try:
        if ids:
            ticket_flags.keep(resources.casework(), bank_id, dict.fromkeys(ids, recall))
    except SQLAlchemyError:  # flags are a by-product of a recall: never fail it
        logger.warning("could not keep the ticket flags in the review store", exc_info=True)


@st.cache_data(ttl=60, show_spinner=False, max_entries=4)
def _legacy_plan(base_url: str, bank_id: str, names: tuple[str, ...], stamp: int) -> migration.MigrationPlan:
    # base_url and stamp are only part of the cache key
    return migration.plan(resources.gateway(), bank_id, [Customer(name=n) for n in names])


def legacy_plan(bank_id: str, customers: Sequence[Customer]) -> migration.MigrationPlan:
    """The migration's dry run of the support bank (its untagged documents, classified)."""
    stamp = resources.freshness().stamp(bank_id, EVERYTHING)
    return _legacy_plan(resources.settings().base_url, bank_id, tuple(c.name for c in customers), stamp)

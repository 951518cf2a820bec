"""Streamlit-side wiring for the support pages: cached ticket recalls with per-customer invalidation.
The logic lives in ticket_recall / ticket_decisions / migration."""

from __future__ import annotations

import streamlit as st

from dashboard import runtime
from dashboard.customer_tags import customer_tag
from dashboard.ticket_recall import TicketRecall, recall_for_ticket

RECALL_TTL_S = 300


@st.cache_resource
def _generations() -> dict[str, int]:
    """customer tag -> generation; bumped when a decision for that customer is retained."""
    return {}


def generation(customer: str) -> int:
    return _generations().get(customer_tag(customer), 0)


def invalidate(customer: str | None = None) -> None:
    """Make the next recall for this customer (or for everyone) go to the server again."""
    generations = _generations()
    if customer is None:
        _cached_recall.clear()
        return
    tag = customer_tag(customer)
    generations[tag] = generations.get(tag, 0) + 1


@st.cache_data(ttl=RECALL_TTL_S, show_spinner=False, max_entries=200)
def _cached_recall(base_url: str, bank_id: str, customer: str, issue: str, generation: int) -> TicketRecall:
    # base_url and `generation` are only part of the cache key (no leading underscore: Streamlit would not hash them).
    log = runtime.recall_log()
    with log.timed("ticket"):
        result = recall_for_ticket(runtime.gateway().recall, bank_id, customer, issue)
    log.add_ticket(bank_id, issue, result)
    return result


def recall(bank_id: str, customer: str, issue: str) -> TicketRecall:
    return _cached_recall(runtime.settings().base_url, bank_id, customer, issue, generation(customer))

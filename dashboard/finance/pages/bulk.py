"""Bulk acceptance on the Exceptions page: the open cases whose recommendation is well supported and already
recalled, one confirmation listing them, then one decision per case through the decision service, each on what the
confirmation listed."""

from __future__ import annotations

import streamlit as st

from components.workflow import confirm_bulk, notice
from dashboard.app import access, deciding, resources
from dashboard.app.agent_part import agent_part_of
from dashboard.finance import queue as exception_queue
from dashboard.finance.decisions import exception_decision
from dashboard.finance.kind import FINANCE
from dashboard.finance.models import OUTCOME_WORDS, ExceptionCase
from dashboard.finance.pages import case as finance_case
from dashboard.finance.pages import recalls as finance_recalls
from dashboard.finance.policy import Recommendation, assess
from dashboard.finance.recall import TwoStageResult
from dashboard.hindsight.write_facts import asker

BULK, BULK_SHOWN = "exceptions_bulk_confirmed", "exceptions_bulk_shown"


def _open_cases(bank: str, queue, me: str | None) -> list[ExceptionCase]:
    """The queue's open cases nobody else holds."""
    holders = resources.casework().live_claims(bank, finance_case.KIND)
    waiting = {*queue.decided, *queue.held, *queue.blind}
    return [c for c in queue.shown if c.id not in waiting and holders.get(c.id, me) == me]


def _candidates(bank: str, queue, me: str | None) -> list[tuple[ExceptionCase, TwoStageResult, Recommendation]]:
    """Each open case whose recall is at hand and whose recommendation is well supported (on a click only)."""
    at_hand = finance_recalls.cached_cases(bank, _open_cases(bank, queue, me), queue.k)
    ready = []
    for c in _open_cases(bank, queue, me):
        if c.id in at_hand:
            settings = resources.settings()
            result, rec = assess(
                at_hand[c.id],
                resources.outbox().provenance.origin,
                settings.origin_weights,
                untrusted_decides=settings.untrusted_decides,
                ask_server=asker(resources.gateway(), bank),
            )
            if exception_queue.well_supported(rec):
                ready.append((c, result, rec))
    return ready


def bulk_bar(bank: str, queue, me: str | None) -> None:
    """Accept the well-supported recommendations: one confirmation, then one decision per case, each on what the
    confirmation listed."""
    with st.container(horizontal=True, vertical_alignment="center"):
        if st.button(
            "Accept well-supported recommendations",
            key="bulk_open",
            icon=":material/done_all:",
            disabled=me is None or not access.can("decide"),
            help="Open cases whose recommendation cites relevant precedents with high confidence; you confirm the list first"
            + (" (type your reviewer name first)" if me is None else ""),
        ):
            candidates = _candidates(bank, queue, me)
            if candidates:
                st.session_state[BULK_SHOWN] = {c.id: finance_case.shown_of(c, res, r) for c, res, r in candidates}
                confirm_bulk(
                    {
                        c.id: f"{c.id}: {c.vendor_code} {c.exception_type.replace('_', ' ')}, {OUTCOME_WORDS[r.action]}"
                        for c, _res, r in candidates
                    },
                    BULK,
                )
            else:
                notice("No open case has a well-supported recommendation at hand yet.", ok=False)
        open_ids = [c for c in queue.shown if c.id not in queue.decided]
        loading = len(open_ids) - len(finance_recalls.cached_cases(bank, open_ids, queue.k))
        if loading:
            if not resources.settings().prefetch_queue:
                st.caption(
                    f"{loading} open case(s) not recalled yet (background recall is off): bulk acceptance offers the cases opened so far."
                )
            elif len(queue.shown) <= finance_recalls.PREFETCH_AHEAD:
                st.caption(f"{loading} open case(s) are still being recalled in the background.")
            else:
                st.caption(
                    f"{loading:,} open case(s) not recalled yet: the {finance_recalls.PREFETCH_AHEAD} after the open case are "
                    "recalled in the background, and bulk acceptance offers the cases at hand."
                )
    confirmed = st.session_state.pop(BULK, None)
    if confirmed:
        listed = st.session_state.pop(BULK_SHOWN, {})
        note = "Accepted in bulk: a well-supported recommendation."
        proposals = []
        for c, result, rec in _candidates(bank, queue, me):
            if c.id in confirmed and c.id in listed:  # only what the reviewer saw, on what it showed then
                decision = exception_decision(
                    c,
                    rec,
                    reviewer=me,
                    authenticated=access.reviewer("reviewer_name").signed_in,
                    action="accept_recommendation",
                    note=note,
                    agent=agent_part_of(FINANCE, c.id),
                )
                proposals.append(finance_case.proposal_for(c, rec, decision, 0, result, listed[c.id]))
        refused = deciding.record_many(bank, proposals, finance_case.KEYS.flash)
        notice(f"Not recorded: {refused}", ok=False)

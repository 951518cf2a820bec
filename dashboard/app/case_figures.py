"""The case figures as the pages read them: each case's status and a queue's counts (decided, held for a second
approver, held for a blind second review, awaiting the lead, open), counted once by dashboard/review/figures.py from
the review store; and the cases with incidents, as the Incidents check keeps them. A page calls these instead of
counting, so no two pages can disagree."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import streamlit as st

from dashboard.agents.incidents import CaseIncidents
from dashboard.app import resources
from dashboard.delivery.outbox import StoredDecision
from dashboard.review import figures
from dashboard.review.approvals import HeldDecision
from dashboard.review.figures import CaseFigures, case_figures, case_status, held_statuses
from dashboard.review.incident_cases import IncidentCases
from dashboard.review.second_review import BlindCase
from dashboard.store.standing import DecisionState


def held_now(bank_id: str, case_kind: str) -> dict[str, str]:
    """case id -> the status of its held decision (awaiting second approval, returned, awaiting blind second review,
    awaiting lead), for the few cases held."""
    service = resources.decisions()
    return held_statuses(service.approvals.held(bank_id, case_kind), service.second_reviews.open(bank_id, case_kind))


def queue_figures(bank_id: str, case_kind: str, ids: Iterable[str]) -> CaseFigures:
    """The figures of the queue `ids` of this bank and kind, as every page shows them."""
    return case_figures(ids, resources.outbox().decision_states(bank_id, case_kind), held_now(bank_id, case_kind))


def figures_from(
    ids: Iterable[str],
    standing: Mapping[str, DecisionState],
    held: Mapping[str, HeldDecision],
    blind: Mapping[str, BlindCase],
) -> CaseFigures:
    """The same figures from what a queue page has read already (Outbox.decision_states, Approvals.held,
    SecondReviews.open): nothing is read again."""
    return case_figures(ids, standing, held_statuses(held, blind))


def statuses(bank_id: str, case_kind: str, ids: Iterable[str]) -> dict[str, str]:
    """case id -> its status (review.figures.case_status), for each of `ids`: a queue table's status column."""
    standing: Mapping[str, DecisionState] = resources.outbox().decision_states(bank_id, case_kind)
    held = held_now(bank_id, case_kind)
    return {case_id: case_status(standing.get(case_id), held.get(case_id)) for case_id in ids}


def statuses_from(
    ids: Iterable[str],
    standing: Mapping[str, DecisionState],
    held: Mapping[str, HeldDecision],
    blind: Mapping[str, BlindCase],
) -> dict[str, str]:
    """The same statuses from what a queue page has read already (as figures_from)."""
    on_hold = held_statuses(held, blind)
    return {case_id: case_status(standing.get(case_id), on_hold.get(case_id)) for case_id in ids}


def log_statuses(history: Iterable[StoredDecision]) -> dict[tuple[str, str, str], str]:
    """(bank, case kind, case id) -> the status now of each case these decisions are about (the audit log's rows)."""
    return figures.log_statuses(history, resources.outbox().decision_states, held_now)


@st.cache_resource
def _incident_cases() -> IncidentCases:
    return IncidentCases(resources.outbox().engine)


def blind_now(bank_id: str, case_kind: str) -> list[BlindCase]:
    """The cases of this bank and kind awaiting a blind second review or a lead (the Overview lists them, naming
    nobody and no outcome)."""
    return list(resources.decisions().second_reviews.open(bank_id, case_kind).values())


def incident_cases(bank_id: str, case_kind: str) -> list[CaseIncidents]:
    """The cases with incidents of this bank and kind, as the last Incidents check kept them."""
    return [
        CaseIncidents(case_kind, s.case_id, s.kinds, s.variants)
        for s in _incident_cases().read(bank_id, case_kind).values()
    ]

"""One figure, one function (review/figures.py): one review store holding each kind of hold (above an approval
limit, returned by the second approver, awaiting a blind second review, awaiting the lead), a decision that stands and
a held ticket; the Overview's figures and headline, the Audit log's rows and their CSV and JSON export all say the
same numbers, and none of them names the first reviewer of a case awaiting its blind second review. No Hindsight: the
decisions are recorded by the decision service and never delivered."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from dashboard.access.limits import ApprovalLimits
from dashboard.app.case_figures import figures_from
from dashboard.delivery.outbox import Outbox
from dashboard.finance import queue as exception_queue
from dashboard.finance.policy import Recommendation
from dashboard.reporting import overview
from dashboard.reporting.audit_export import HIDDEN, audit_rows, to_csv, to_json
from dashboard.reporting.headline import HEADLINE_START, figures_words, headline
from dashboard.review.decisions import DecisionService, Proposal, decision_service
from dashboard.review.figures import (
    STATUSES,
    CaseFigures,
    case_figures,
    case_status,
    figures_of,
    held_statuses,
    log_statuses,
)
from dashboard.store.standing import DecisionState
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import interaction_record, ticket_decision
from tests.helpers import DEMO_CASES, DEMO_TICKETS, built_in_overview, exception_proposal

REC = Recommendation(action="approve", confidence=0.8, cited=[], rationale="r", policy="precedent")
FIN, SUP = "fin", "sup"
SECRET_NAME, SECRET_NOTE = (
    "Quincy Firstly",
    "quincy-note-5e1",
)  # the first reviewer of the case awaiting its blind review
E_LIMIT, E_RETURNED, E_BLIND, E_LEAD, E_DECIDED = (c.id for c in DEMO_CASES[:5])
T_BLIND = DEMO_TICKETS[0].id
EXPECTED_EXCEPTIONS = CaseFigures(
    cases=len(DEMO_CASES),
    open=len(DEMO_CASES) - 4,
    returned=1,
    decided=1,
    pending_delivery=1,
    held_for_approver=1,
    held_for_blind_review=1,
    awaiting_lead=1,
)
EXPECTED_TICKETS = CaseFigures(cases=len(DEMO_TICKETS), open=len(DEMO_TICKETS) - 1, held_for_blind_review=1)


def _case(case_id: str):
    return next(c for c in DEMO_CASES if c.id == case_id)


@pytest.fixture
def store(tmp_path) -> DecisionService:
    """Every kind of hold, on the demo queues: one case each, and one held ticket."""
    outbox = Outbox(tmp_path / "store.sqlite3")
    service = decision_service(outbox, None, limits=ApprovalLimits({"reviewer": 10_000}), second_review_share=1.0)

    def decide(case_id: str, who: str, outcome: str | None = None, note: str = "", amount: float = 100.0):
        return service.decide(
            FIN, "reviewer", replace(exception_proposal(_case(case_id), REC, who, outcome, note), amount=amount)
        )

    decide(E_LIMIT, "Dana", amount=50_000)  # above Dana's limit: a second approver must confirm
    decide(E_RETURNED, "Dana", amount=50_000)
    service.second_approval(FIN, "lead", "exception", E_RETURNED, "Max", confirm=False)  # back in the queue
    decide(E_BLIND, SECRET_NAME, "reject", note=SECRET_NOTE)
    decide(E_LEAD, "Dana")
    service.second_review(FIN, "reviewer", exception_proposal(_case(E_LEAD), REC, "Lee", "reject"))
    decide(E_DECIDED, "Dana")
    service.second_review(FIN, "reviewer", exception_proposal(_case(E_DECIDED), REC, "Lee"))  # agrees: it stands
    ticket = DEMO_TICKETS[0]
    decision = ticket_decision(
        ticket, action="approve", reviewer="Ada", authenticated=False, decided_at=datetime.now(UTC)
    )
    service.decide(
        SUP,
        "reviewer",
        Proposal(decision=decision, record=interaction_record(ticket, decision), scope=customer_tag(ticket.customer)),
    )
    return service


def _held(service: DecisionService, bank: str, kind: str) -> dict[str, str]:
    return held_statuses(service.approvals.held(bank, kind), service.second_reviews.open(bank, kind))


def _figures(service: DecisionService, bank: str, kind: str, ids: list[str]) -> CaseFigures:
    return case_figures(ids, service.outbox.decision_states(bank, kind), _held(service, bank, kind))


def test_each_status_is_the_queue_pages_and_the_set_count_is_the_count_of_each_cases_status():
    assert set(STATUSES) == set(exception_queue.STATUSES)  # the statuses the Exceptions queue filters by
    standing = {
        "A": DecisionState("delivered", "approve"),
        "B": DecisionState("pending", "reject"),
        "C": DecisionState("delivered", "approve"),
    }
    held = {
        "C": "awaiting second approval",
        "D": "awaiting lead",
        "E": "returned",
        "F": "awaiting blind second review",
        "X": "awaiting lead",
    }
    ids = ["A", "B", "C", "D", "E", "F", "G"]  # X is not queued
    statuses = [case_status(standing.get(i), held.get(i)) for i in ids]
    assert statuses == [
        "decided",
        "pending delivery",
        "awaiting second approval",
        "awaiting lead",
        "returned",
        "awaiting blind second review",
        "open",
    ]
    assert (
        case_figures(ids, standing, held)
        == figures_of(Counter(statuses))
        == CaseFigures(
            cases=7,
            open=2,
            returned=1,
            decided=2,
            pending_delivery=1,
            held_for_approver=1,
            held_for_blind_review=1,
            awaiting_lead=1,
        )
    )
    assert case_figures(set(ids), standing, held) == case_figures(ids, standing, held)


def test_the_overview_the_audit_log_and_its_export_say_the_same_figures(store):
    cases, tickets = [c.id for c in DEMO_CASES], [t.id for t in DEMO_TICKETS]
    assert _figures(store, FIN, "exception", cases) == EXPECTED_EXCEPTIONS
    assert _figures(store, SUP, "ticket", tickets) == EXPECTED_TICKETS
    # a queue page counts from what it has read already, by the same function
    assert (
        figures_from(
            cases,
            store.outbox.decision_states(FIN, "exception"),
            store.approvals.held(FIN, "exception"),
            store.second_reviews.open(FIN, "exception"),
        )
        == EXPECTED_EXCEPTIONS
    )

    outbox = store.outbox
    m = overview.build(
        standing={
            "exception": outbox.standing_counts(FIN, "exception"),
            "ticket": outbox.standing_counts(SUP, "ticket"),
        },
        states={"exception": outbox.decision_states(FIN, "exception"), "ticket": outbox.decision_states(SUP, "ticket")},
        held={"exception": _held(store, FIN, "exception"), "ticket": _held(store, SUP, "ticket")},
        blind=[
            *store.second_reviews.open(FIN, "exception").values(),
            *store.second_reviews.open(SUP, "ticket").values(),
        ],
        waiting=store.approvals.waiting(),
        **built_in_overview(DEMO_CASES, DEMO_TICKETS, ticket_flags={}),
        latencies=[],
    )
    fin, sup = m.queues
    assert CaseFigures(**fin.model_dump(include=set(CaseFigures.model_fields))) == EXPECTED_EXCEPTIONS
    assert CaseFigures(**sup.model_dump(include=set(CaseFigures.model_fields))) == EXPECTED_TICKETS
    assert [w.case_id for w in m.approvals_waiting] == [E_LIMIT]
    assert {(h.case_id, h.status) for h in m.held_blind} == {
        (E_BLIND, "awaiting blind second review"),
        (E_LEAD, "awaiting lead"),
        (T_BLIND, "awaiting blind second review"),
    }
    every = overview.total(m.queues)
    assert headline(m).startswith(
        f"{every.cases} cases ({len(cases)} exceptions, {len(tickets)} tickets): 1 decided (1 not yet stored "
        "in memory), 4 held (1 for a second approver, 2 for a blind second review, 1 awaiting the lead), "
    )
    assert "People overruled the agent on 0 of the 1 decision made in the date range (0%)." in headline(m)
    assert HEADLINE_START.match(headline(m))  # what the browser bench waits for

    history = outbox.history()
    statuses = log_statuses(history, outbox.decision_states, lambda bank, kind: _held(store, bank, kind))
    rows = audit_rows(history, store.second_reviews.trail([e.id for e in history]), statuses)
    for exported in (list(csv.DictReader(io.StringIO(to_csv(rows)))), json.loads(to_json(rows))):
        by_case = {(r["case_kind"], r["case_id"]): r["case_status"] for r in exported}
        for kind, ids, expected in (("exception", cases, EXPECTED_EXCEPTIONS), ("ticket", tickets, EXPECTED_TICKETS)):
            counted = Counter(status for (k, case_id), status in by_case.items() if k == kind)
            counted["open"] += len(ids) - sum(counted.values())  # the cases with no decision are in no row
            assert figures_of(counted) == expected


def test_blind_means_blind_in_the_overview_the_audit_log_and_its_exports_until_the_second_reviewer_decides(store):
    outbox = store.outbox
    history = outbox.history()
    rows = audit_rows(history, store.second_reviews.trail([e.id for e in history]))
    (first,) = [r for r in rows if r.case_id == E_BLIND]
    assert (first.reviewer, first.outcome, first.overridden, first.reason_code, first.note, first.cited_evidence) == (
        HIDDEN,
        HIDDEN,
        None,
        "",
        "",
        "",
    )
    for text, exported in (
        (to_csv(rows), list(csv.DictReader(io.StringIO(to_csv(rows))))),
        (to_json(rows), json.loads(to_json(rows))),
    ):
        assert SECRET_NAME not in text and SECRET_NOTE not in text
        assert [(r["reviewer"], r["reason_code"]) for r in exported if r["case_id"] == E_BLIND] == [(HIDDEN, "")]
    m = overview.build(
        standing={"exception": outbox.standing_counts(FIN, "exception")},
        states={"exception": outbox.decision_states(FIN, "exception")},
        held={"exception": _held(store, FIN, "exception")},
        blind=store.second_reviews.open(FIN, "exception").values(),
        waiting=store.approvals.waiting(),
        **built_in_overview(DEMO_CASES, [], ticket_flags={}),
        latencies=[],
    )
    seen = m.model_dump_json() + headline(m) + figures_words(overview.total(m.queues))
    assert SECRET_NAME not in seen and SECRET_NOTE not in seen
    assert not any(
        a.overridden for a in m.agreement
    )  # the first reviewer overrode the agent: not counted before the review

    store.second_review(
        FIN, "reviewer", exception_proposal(_case(E_BLIND), REC, "Lee", "reject")
    )  # now the review is given
    history = outbox.history()
    rows = audit_rows(history, store.second_reviews.trail([e.id for e in history]))
    assert (SECRET_NAME, "reject", True, SECRET_NOTE) in {(r.reviewer, r.outcome, r.overridden, r.note) for r in rows}

"""One answer to "is this the customer's record?": the ticket's recall, the trace opened from the ticket and "Why not
this one?" ask the same rule (support.admission.whose), so they cannot disagree. Against the real server, in both
modes, for every demo ticket."""

from __future__ import annotations

import pytest

from dashboard.support.admission import Ownership, whose
from dashboard.support.recall import customers_records, ownership_sentence, recall_for_ticket
from dashboard.traces.analysis import analyse
from dashboard.traces.request import TraceRequest, fetch_trace
from dashboard.traces.verdict import CaseFocus, verdict
from dashboard.traces.why_not import load_document
from tests.helpers import DEMO_TICKETS

ANN_LEGACY = {"SUP-L-001", "SUP-L-002"}  # the ownership rule admits exactly these two for Ann Lee (T-2004)


def _trace(gateway, bank: str, request) -> object:
    """The trace the ticket page links to for one of its recalls (dashboard/support/pages/admission_view.py: _trace_links)."""
    return fetch_trace(
        gateway,
        TraceRequest(
            bank=bank,
            query=request.query,
            tags=tuple(request.tags),
            tags_match=request.tags_match,
            max_tokens=request.max_tokens,
        ),
    )


@pytest.mark.parametrize("ticket", DEMO_TICKETS, ids=[t.id for t in DEMO_TICKETS])
def test_the_ticket_the_trace_and_why_not_call_the_same_records_the_customers(live, shared_demo, ticket):
    gateway, bank = live.gateway, shared_demo.support
    found = recall_for_ticket(gateway.recall, bank, ticket.customer, ticket.issue, read_document=gateway.document)
    admitted = {e.document_id for e in found.evidence}
    # the recall whose documents the page judged: the tagged one, else the bank-wide candidate search
    judged_by_page = found.tagged if found.path == "tagged" else [*found.legacy_admitted, *found.legacy_rejected]
    shown = {e.document_id for e in judged_by_page if e.document_id}
    traced = _trace(gateway, bank, found.requests[0 if found.path == "tagged" else 1])

    documents = {label.document_id: label.tags for label in traced.labels.values() if label.document_id}
    starred = customers_records(bank, ticket.customer, documents.items(), gateway.document)
    assert admitted <= set(starred), f"{ticket.id}: the trace does not star {admitted - set(starred)}"
    assert set(starred) & shown == admitted, (
        f"{ticket.id}: the page shows {shown}, admits {admitted}, the trace stars {set(starred)}"
    )
    for document_id in shown:  # "Why not this one?" on each record the page showed
        document = load_document(gateway, bank, document_id)
        said = ownership_sentence(bank, ticket.customer, document_id, document.tags, gateway.document)
        assert ("own record" in said) == (document_id in admitted), said

    if ticket.id == "T-2004":  # the disagreement that was seen: the page admitted these two, the trace starred none
        assert found.path == "legacy" and admitted == ANN_LEGACY
        assert {starred[d] for d in ANN_LEGACY} == {Ownership.FIRST_SENTENCE}
        focus = CaseFocus(kind="ticket", id=ticket.id, exact_tags=(), owned={d: str(h) for d, h in starred.items()})
        counted = verdict(traced.response, analyse(traced.response), traced.labels, focus)
        top = {m.document_id for m in traced.response.results[:10]}
        assert counted.exact_in_top == sum(1 for m in traced.response.results[:10] if m.document_id in starred) >= 1
        assert ANN_LEGACY & top


def test_whose_answers_by_tag_or_first_sentence_and_nothing_else():
    assert whose(None, ["customer:ann-lee"], "Ann Lee") is Ownership.TAG
    assert whose("Customer Ann Lee contacted support. Refund.", [], "Ann Lee") is Ownership.FIRST_SENTENCE
    assert (
        whose("customer  ann lee contacted support. x", [], "Ann Lee") is Ownership.FIRST_SENTENCE
    )  # spacing and case
    assert whose("Note: Customer Ann Lee contacted support.", [], "Ann Lee") is None  # not at the start
    assert whose("Customer Ann Leeds contacted support.", [], "Ann Lee") is None
    assert whose("Customer Ann Lee contacted support.", ["customer:bob"], "Ann Lee") is None  # tagged for another
    assert whose(None, [], "Ann Lee") is None  # no readable original text: not proven

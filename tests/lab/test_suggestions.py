"""A suggestion says what else it lets in, and the safe fix comes first: pure logic on a made answer, then on the
real server (a ticket's customer whose old record the strict tag filter keeps out; a finance case whose fix raises k),
through the function the Traces page calls and on the page."""

from __future__ import annotations

from datetime import UTC, datetime

from dashboard.lab.suggestions import (
    OTHER_CUSTOMERS_UNTAGGED,
    OTHER_TYPES,
    OTHER_VENDORS,
    case_classifier,
    plain_classifier,
    suggestions,
    ticket_classifier,
)
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import interaction_record, ticket_decision
from dashboard.support.recall import customers_records, recall_for_ticket
from dashboard.traces.request import TraceRequest
from dashboard.traces.why_not import BankDocument, Change, WhyNot, bank_documents, explain, load_document
from tests.helpers import demo_ticket, open_page, texts


def _answer(**update) -> WhyNot:
    base = WhyNot(
        document_id="SUP-L-002",
        stage="tag_filter",
        sentence="excluded by the tag filter",
        changes=[Change(setting="tags_match", value="any")],
        reachable=True,
    )
    return base.model_copy(update=update)


def test_the_migration_comes_first_and_the_looser_filter_counts_the_strangers_it_admits():
    admits = [
        BankDocument(id="SUP-L-001"),
        BankDocument(id="SUP-L-003"),
        BankDocument(id="SUP-L-004"),
        BankDocument(id="SUP-S-001", tags=("customer:bob-stone",)),
    ]
    classify = ticket_classifier(lambda docs: {"SUP-L-001"} & {d.id for d in docs})
    first, second = suggestions(_answer(filter_admits=admits), classify, migrate_to="customer:ann-lee")
    assert first.kind == "migrate" and first.safe and first.lets_in.foreign == 0
    assert "lets in nothing else" in first.sentence()
    assert second.kind == "settings" and not second.safe
    assert second.lets_in.strangers == {
        OTHER_CUSTOMERS_UNTAGGED: ["SUP-L-003", "SUP-L-004"],
        "records tagged for other customers": ["SUP-S-001"],
    }
    assert second.lets_in.own == ["SUP-L-001"]
    assert second.sentence() == (
        "Change the settings (tags_match any): also lets in 2 other customers' untagged records "
        "(or with no provable owner) and 1 records tagged for other customers and 1 of the case's own."
    )


def test_a_safe_setting_change_is_still_offered_and_a_leaking_one_never_before_a_safe_one():
    only_own = suggestions(
        _answer(filter_admits=[BankDocument(id="SUP-L-001")]), ticket_classifier(lambda docs: {d.id for d in docs})
    )
    assert [s.safe for s in only_own] == [True]
    leaking = suggestions(
        _answer(filter_admits=[BankDocument(id="x")]), plain_classifier, migrate_to="customer:ann-lee"
    )
    assert [s.kind for s in leaking] == ["migrate", "settings"] and "1 untagged records" in leaking[1].sentence()


def test_a_finance_case_counts_other_vendors_and_other_types():
    classify = case_classifier(("vendor:V01", "type:price_variance"))
    answer = _answer(
        stage="cut_by_k",
        changes=[Change(setting="k", value=5)],
        also_returned=[
            BankDocument(id="P1", tags=("vendor:V01", "type:price_variance")),
            BankDocument(id="P2", tags=("vendor:V02", "type:price_variance")),
            BankDocument(id="P3", tags=("vendor:V01", "type:late_delivery")),
        ],
    )
    (only,) = suggestions(answer, classify)
    assert only.lets_in.strangers == {OTHER_VENDORS: ["P2"], OTHER_TYPES: ["P3"]} and only.lets_in.own == ["P1"]


def _approve_t2004(gateway, bank: str) -> None:
    """T-2004's draft approved and retained tagged for Ann Lee: her next ticket takes the tagged path, and her two old
    records are kept out by its strict tag filter."""
    ticket = demo_ticket("T-2004")
    decision = ticket_decision(
        ticket,
        action="approve",
        reviewer="Rita",
        authenticated=False,
        decided_at=datetime(2026, 11, 13, 10, 0, tzinfo=UTC),
    )
    gateway.retain(bank, [interaction_record(ticket, decision)])


def test_why_not_an_old_record_counts_the_other_customers_records_a_looser_filter_admits(hindsight, demo_banks):
    gateway, bank = hindsight.gateway, demo_banks.support
    _approve_t2004(gateway, bank)
    ticket = demo_ticket("T-2012")
    found = recall_for_ticket(gateway.recall, bank, ticket.customer, ticket.issue, read_document=gateway.document)
    assert found.path == "tagged"
    sent = found.requests[0]
    request = TraceRequest(
        bank=bank, query=sent.query, tags=tuple(sent.tags), tags_match=sent.tags_match, max_tokens=sent.max_tokens
    )
    document = load_document(gateway, bank, "SUP-L-002")
    answer = explain(gateway, request, document, 10)
    assert answer.stage == "tag_filter" and answer.changes[0] == Change(setting="tags_match", value="any")

    # counted on the bank, independently: every untagged document but this one passes `any`, and only Ann Lee's are hers
    untagged = [d for d in bank_documents(gateway, bank) if not d.tags and d.id != "SUP-L-002"]
    hers = set(customers_records(bank, "Ann Lee", [(d.id, d.tags) for d in untagged], gateway.document))
    assert hers == {"SUP-L-001"} and len(untagged) > len(hers)
    assert {d.id for d in answer.filter_admits} == {d.id for d in untagged}

    classify = ticket_classifier(
        lambda docs: set(customers_records(bank, "Ann Lee", [(d.id, d.tags) for d in docs], gateway.document))
    )
    first, second = suggestions(answer, classify, migrate_to=customer_tag("Ann Lee"))
    assert first.kind == "migrate" and first.safe
    strangers = len(untagged) - len(hers)
    assert second.lets_in.strangers[OTHER_CUSTOMERS_UNTAGGED] and second.lets_in.foreign >= strangers
    assert (
        f"also lets in {len(second.lets_in.strangers[OTHER_CUSTOMERS_UNTAGGED])} other customers' untagged records"
        in second.sentence()
    )


def test_the_traces_page_puts_the_migration_first_and_says_how_many_strangers(hindsight, demo_banks, point_app):
    gateway, bank = hindsight.gateway, demo_banks.support
    _approve_t2004(gateway, bank)
    ticket = demo_ticket("T-2012")
    found = recall_for_ticket(gateway.recall, bank, ticket.customer, ticket.issue, read_document=gateway.document)
    sent = found.requests[0]
    point_app(hindsight.env(support=bank, finance=demo_banks.finance))
    params = TraceRequest(
        bank=bank, query=sent.query, tags=tuple(sent.tags), tags_match=sent.tags_match, max_tokens=sent.max_tokens
    ).to_query_params()
    at = open_page("views/traces.py", **params, ticket="T-2012")
    at.button(key="trace_run").click().run()
    at.text_input(key="why_not_search").input("SUP-L-002").run()
    at.button(key="why_not_run").click().run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert "SUP-L-002 is Ann Lee's own record, by its first sentence" in shown
    first, second = (
        [s.value for s in at.success if s.value.startswith("1. ")],
        [w.value for w in at.warning if w.value.startswith("2. ")],
    )
    assert first and "Tag SUP" in first[0].replace("\\", "") and "lets in nothing else" in first[0]
    assert second and "other customers' untagged records" in second[0].replace("\\", "")


def test_the_what_if_names_what_enters_the_top_k_that_is_not_the_cases():
    from components.trace_view import whatif_strangers
    from dashboard.traces.labels import CandidateLabel
    from dashboard.traces.verdict import CaseFocus

    labels = {
        "m1": CandidateLabel(document_id="SUP-L-001"),
        "m2": CandidateLabel(document_id="SUP-L-007"),
        "m3": CandidateLabel(document_id="SUP-S-004", tags=("customer:ann-lee",)),
    }
    ticket = CaseFocus(
        kind="ticket", id="T-2004", exact_tags=("customer:ann-lee",), owned={"SUP-L-001": "by its first sentence"}
    )
    assert whatif_strangers(["m1", "m2", "m3", "m9"], labels, ticket) == ["SUP-L-007", "SUP-S-004", "memory m9"]
    case = CaseFocus(kind="case", id="E-1", exact_tags=("vendor:V01", "type:price_variance"))
    labels["m4"] = CandidateLabel(document_id="P1", tags=("vendor:V01", "type:price_variance"))
    assert whatif_strangers(["m4", "m2"], labels, case) == ["SUP-L-007"]

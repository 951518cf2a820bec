"""The pure rules behind the Tickets page's legacy history: which of a customer's untagged records a
tagged recall left out, which record may be tagged for a customer (and why not), the records a ticket
shows, flags on a record, and error messages without class names."""

import pytest

from components.status_banner import plain_error
from dashboard import demo_data
from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.errors import HindsightRequestRejected
from dashboard.hindsight.wire import StoredDocument
from dashboard.queue_files import load_rows
from dashboard.review.casework import Casework
from dashboard.support.legacy_history import NotConsulted, not_consulted, tag_refusal, ticket_records
from dashboard.support.migration import MigrationPlan, _plan
from dashboard.support.models import Customer
from dashboard.support.recall import TicketEvidence, TicketRecall
from dashboard.support.record_flags import RECORD_KIND, FlagError, flag_record, flags_on

CUSTOMERS = load_rows(demo_data.CUSTOMERS, Customer, id_field="name")
UNTAGGED = {
    "L-1": "Customer Ann Lee contacted support.\n\nCurrent issue:\nCharged twice.",
    "L-2": "customer   ann   LEE contacted support. Invoice PDF.",  # case and spacing differ: still hers
    "L-3": "Customer Ann Leeds contacted support. Address change.",  # a longer name: never Ann Lee's
    "L-4": "Escalation note: Customer Ann Lee contacted support. Billing.",  # marker not at the start
    "L-5": "Summary of past contacts for Ann Lee.",  # no marker
    "L-6": "Customer Priya Nair contacted support. DPA.",
}


def plan(untagged: dict[str, str] = UNTAGGED, customers=CUSTOMERS) -> MigrationPlan:
    documents = [StoredDocument(id=doc, original_text=text) for doc, text in untagged.items()]
    return _plan("bank", len(documents) + 3, documents, customers)


def evidence(doc: str, text: str, tags=(), admitted=True, verdict="admitted") -> TicketEvidence:
    return TicketEvidence(
        id=doc, document_id=doc, text=text, tags=list(tags), admitted=admitted, verdict=verdict, reason="r"
    )


def tagged_recall(customer="Ann Lee") -> TicketRecall:
    own = evidence("ticket-T-2004", f"Customer {customer} contacted support. Refund.", tags=["customer:ann-lee"])
    return TicketRecall(customer=customer, tag="customer:ann-lee", path="tagged", tagged=[own])


def test_a_tagged_recall_left_out_exactly_the_records_the_ownership_rule_admits():
    skipped = not_consulted(tagged_recall(), plan())
    assert [c.document_id for c in skipped.records] == ["L-1", "L-2"]
    assert [c.document_id for c in skipped.migratable] == ["L-1", "L-2"] and skipped.not_migratable == []
    assert (
        skipped.sentence()
        == "2 legacy records of this customer were not consulted because a tagged record exists: migrate them."
    )


def test_one_record_left_out_reads_in_the_singular():
    skipped = not_consulted(tagged_recall("Priya Nair"), plan())
    assert [c.document_id for c in skipped.records] == ["L-6"]
    assert (
        skipped.sentence()
        == "1 legacy record of this customer was not consulted because a tagged record exists: migrate them."
    )


def test_nothing_is_left_out_when_the_legacy_path_ran():
    recall = TicketRecall(
        customer="Ann Lee", tag="customer:ann-lee", path="legacy", legacy_admitted=[evidence("L-1", UNTAGGED["L-1"])]
    )
    assert not_consulted(recall, plan()) is None


def test_a_customer_missing_from_the_directory_is_left_out_but_cannot_be_migrated():
    directory = [c for c in CUSTOMERS if c.name != "Ann Lee"]
    skipped = not_consulted(tagged_recall(), plan(customers=directory))
    assert [c.document_id for c in skipped.records] == ["L-1", "L-2"]
    assert skipped.migratable == [] and len(skipped.not_migratable) == 2


@pytest.mark.parametrize(
    ("doc", "tags", "expected"),
    [
        ("L-1", (), None),
        ("L-2", (), None),
        ("L-3", (), "it belongs to Ann Leeds, not Ann Lee"),
        ("L-4", (), "the migration rule cannot prove its owner: marker not at the start"),
        ("L-5", (), "the migration rule cannot prove its owner: no 'Customer <name> contacted support.' marker"),
        ("L-6", (), "it belongs to Priya Nair, not Ann Lee"),
        ("SUP-T-004", ("customer:chen-wei",), "it is not an untagged legacy record (customer:chen-wei)"),
        (None, (), "it has no document id"),
        ("L-7", (), "it is not an untagged legacy record"),  # e.g. an observation: no document of its own
    ],
)
def test_tag_for_this_customer_is_allowed_only_for_a_record_the_rule_gives_to_that_customer(doc, tags, expected):
    refusal = tag_refusal(plan(), "Ann  Lee", doc, tags)
    assert refusal is None if expected is None else refusal.startswith(expected), refusal


def test_an_unsafe_directory_refuses_every_tag():
    clash = [*CUSTOMERS, Customer(name="ann lee")]  # the same tag as Ann Lee
    assert tag_refusal(plan(customers=clash), "Ann Lee", "L-1").startswith("the customer directory is not safe")


def test_a_ticket_lists_each_record_once_in_page_order():
    recall = TicketRecall(
        customer="Ann Lee",
        tag="customer:ann-lee",
        path="legacy",
        legacy_admitted=[evidence("L-1", UNTAGGED["L-1"])],
        legacy_rejected=[
            evidence("L-3", UNTAGGED["L-3"], admitted=False, verdict="other_customer_marker"),
            evidence("L-1", UNTAGGED["L-1"], admitted=False),
        ],
    )
    rows = ticket_records(recall)
    assert [(r.key, r.where) for r in rows] == [("L-1", "used: old record"), ("L-3", "found, not used")]
    skipped = NotConsulted(customer="Ann Lee", records=plan().reliable[:1])
    rows = ticket_records(tagged_recall(), skipped)
    assert [(r.key, r.where) for r in rows] == [
        ("ticket-T-2004", "used: tagged history"),
        ("L-1", "not consulted: old record"),
    ]


def test_a_flag_is_stored_on_the_record_with_its_author_ticket_and_note(tmp_path):
    casework = Casework(Outbox(tmp_path / "store.sqlite3").engine)  # migrated to head
    with pytest.raises(FlagError, match="name: a name is required"):
        flag_record(casework, "bank", "L-5", author=" ", ticket_id="T-2004", note="")
    with pytest.raises(FlagError, match="note: 1,001 characters"):
        flag_record(casework, "bank", "L-5", author="Lee", ticket_id="T-2004", note="x" * 1001)
    flag_record(casework, "bank", "L-5", author="Lee", ticket_id="T-2004", note="looks like Ann Lee's")
    flag_record(casework, "bank", "L-5", author="Kim", ticket_id="T-2012", note="")
    found = flags_on(casework, "bank", ["L-5", "L-1", ""])
    assert list(found) == ["L-5"]
    assert [(c.author, c.body) for c in found["L-5"]] == [
        ("Lee", "Flagged for review on ticket T-2004: looks like Ann Lee's"),
        ("Kim", "Flagged for review on ticket T-2012"),
    ]
    assert casework.comments("bank", "ticket", "L-5") == [] and casework.comments("bank", RECORD_KIND, "L-5")


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (
            HindsightRequestRejected("query: needs at least one letter or digit"),
            "query: needs at least one letter or digit",
        ),
        ("HindsightRequestRejected: query: too long", "query: too long"),
        ("aiohttp.client_exceptions.ClientConnectorError: Cannot connect", "Cannot connect"),
        ("RuntimeError: boom", "boom"),
        ("Hindsight at http://x refused: tags[1]: bad", "Hindsight at http://x refused: tags[1]: bad"),
        (KeyError(), "no message was given"),
    ],
)
def test_errors_are_shown_by_their_message_never_their_class_name(error, shown):
    assert plain_error(error) == shown


def test_an_unreachable_server_is_explained_without_a_class_name():

    from dashboard.hindsight.gateway import HindsightGateway

    gateway = HindsightGateway("http://127.0.0.1:9")
    try:
        timed_out, refused = gateway._translate(TimeoutError()), gateway._translate(ConnectionRefusedError())
    finally:
        gateway.close()
    assert str(timed_out) == "Hindsight at http://127.0.0.1:9 is unreachable: no answer in time"
    assert str(refused) == "Hindsight at http://127.0.0.1:9 is unreachable: the connection failed"

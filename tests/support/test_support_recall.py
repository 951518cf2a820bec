"""Ticket recall: with a double (which calls are made) and against the real server (what comes back)."""

import json
from datetime import UTC, datetime

import pytest

from dashboard import demo_data
from dashboard.cli.seed import seed_bank, support_records
from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.wire import Chunk, RecalledMemory, RecallResponse, StoredDocument
from dashboard.queue_files import load_rows
from dashboard.store.errors import DecisionInputError
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import interaction_record, ticket_decision
from dashboard.support.models import Ticket
from dashboard.support.recall import recall_for_ticket
from tests.helpers import run_cli

TICKETS = {t.id: t for t in load_rows(demo_data.TICKETS, Ticket)}


class RecordingRecall:
    """A double of the recall call: tagged or bank-wide results, with the chunks a real server sends."""

    def __init__(
        self, tagged: list[RecalledMemory], bankwide: list[RecalledMemory], originals: dict[str, str] | None = None
    ):
        self.tagged, self.bankwide, self.calls = tagged, bankwide, []
        self.originals = originals  # document -> original text (extraction: the facts' texts differ); None: verbatim

    def __call__(self, bank_id, query, **kwargs):
        self.calls.append(kwargs)
        results = self.tagged if kwargs.get("tags") else self.bankwide
        originals = self.originals if self.originals is not None else {m.document_id: m.text for m in results}
        chunks = {f"b_{doc}_0": Chunk(id=f"b_{doc}_0", text=text) for doc, text in originals.items()}
        return RecallResponse(results=results, chunks=chunks)


def memory(doc: str, text: str, tags=(), n: int = 0) -> RecalledMemory:
    return RecalledMemory(id=f"m-{doc}-{n}", document_id=doc, chunk_id=f"b_{doc}_0", text=text, tags=list(tags))


def test_extracted_facts_are_judged_by_their_document_s_original_text():
    # with an LLM the facts no longer start with the marker; the original chunk does, and decides
    originals = {
        "l1": "Customer Ann Lee contacted support. Charged twice.",
        "l2": "Customer Ann Leeds contacted support. Address.",
    }
    recall = RecordingRecall(
        tagged=[],
        originals=originals,
        bankwide=[
            memory("l1", "Ann Lee asked support for help: charged twice", n=0),
            memory("l2", "Ann Leeds asked support for help: address", n=0),
            memory("l1", "Support resolved Ann Lee's request: refunded", n=1),
        ],
    )
    result = recall_for_ticket(recall, "bank", "Ann Lee", "charged twice")
    assert [(e.ref, e.text) for e in result.evidence] == [("l1", originals["l1"])]  # one document, its original text
    assert result.evidence[0].facts == [
        "Ann Lee asked support for help: charged twice",
        "Support resolved Ann Lee's request: refunded",
    ]
    assert [(e.ref, e.verdict) for e in result.legacy_rejected] == [("l2", "other_customer_marker")]


def test_a_document_whose_original_text_cannot_be_read_is_rejected_and_says_so():
    fact = memory("l1", "Ann Lee asked support for help: charged twice")
    recall = RecordingRecall(tagged=[], bankwide=[fact], originals={})  # the response holds no chunk of it
    result = recall_for_ticket(recall, "bank", "Ann Lee", "charged twice")
    assert result.path == "none" and result.legacy_rejected[0].verdict == "original_text_unreadable"
    assert "original text could not be read" in result.legacy_rejected[0].reason

    # read from the server instead, the same document is admitted on its original text
    def read(bank, doc):
        return StoredDocument(id=doc, original_text="Customer Ann Lee contacted support. Charged twice.")

    assert recall_for_ticket(recall, "bank", "Ann Lee", "charged twice", read_document=read).path == "legacy"


def test_an_observation_is_never_admitted_on_the_legacy_path():
    observation = RecalledMemory(
        id="o1", type="observation", text="Customer Ann Lee contacted support. Billing summary."
    )
    recall = RecordingRecall(tagged=[], bankwide=[observation])
    result = recall_for_ticket(recall, "bank", "Ann Lee", "charged twice")
    assert result.path == "none" and [(e.kind, e.verdict) for e in result.legacy_rejected] == [
        ("observation", "observation")
    ]


def test_a_tagged_observation_built_from_another_customer_s_record_is_excluded():
    own = memory("t1", "Chen Wei asked support for help: export", [customer_tag("Chen Wei")])
    sources = {
        "f1": RecalledMemory(
            id="f1", document_id="t1", text="Chen Wei asked for help", tags=[customer_tag("Chen Wei")]
        ),
        "f2": RecalledMemory(
            id="f2", document_id="l9", text="Ann Lee asked for a refund"
        ),  # untagged: judged on its text
    }
    mixed = RecalledMemory(
        id="o1",
        type="observation",
        text="Billing: refunds",
        tags=[customer_tag("Chen Wei")],
        source_fact_ids=["f1", "f2"],
    )
    clean = RecalledMemory(
        id="o2", type="observation", text="Export: v3", tags=[customer_tag("Chen Wei")], source_fact_ids=["f1"]
    )

    def recall(bank_id, query, **kwargs):
        return RecallResponse(
            results=[own, mixed, clean],
            source_facts=sources,
            chunks={"b_t1_0": Chunk(id="b_t1_0", text="Customer Chen Wei contacted support.")},
        )

    read = {"l9": StoredDocument(id="l9", original_text="Customer Ann Lee contacted support. Refund.")}
    result = recall_for_ticket(recall, "bank", "Chen Wei", "export", read_document=lambda bank, doc: read.get(doc))
    assert result.path == "tagged" and [e.ref for e in result.evidence] == ["t1"]
    verdicts = {o.ref: (o.verdict, o.admitted) for o in result.observations}
    assert verdicts == {"o1": ("observation_mixes_customers", False), "o2": ("observation_this_customer", True)}
    assert [o.ref for o in result.mixing_observations] == ["o1"] and "l9" in result.mixing_observations[0].reason
    assert [(s.document_id, s.owned) for s in result.mixing_observations[0].sources] == [("t1", True), ("l9", False)]
    assert "another customer's marker" in result.mixing_observations[0].sources[1].reason


@pytest.fixture
def support_bank(shared_demo):
    return shared_demo.support


def _recall(live, bank, customer, issue):
    return recall_for_ticket(live.gateway.recall, bank, customer, issue, read_document=live.gateway.document)


def test_real_server_tagged_path_for_a_customer_with_tagged_history(live, support_bank):
    # Priya Nair has tagged history AND a legacy record: the legacy record must not show up
    result = _recall(live, support_bank, "Priya Nair", TICKETS["T-2003"].issue)
    assert result.path == "tagged"
    assert {e.document_id for e in result.tagged} == {"SUP-T-005"}
    assert all("customer:priya-nair" in e.tags for e in result.tagged)
    assert result.legacy_admitted == [] and result.legacy_rejected == []
    assert result.tagged[0].text.startswith(
        "Customer Priya Nair contacted support."
    )  # the original text, in both modes


def test_real_server_legacy_fallback_admits_only_the_right_records(live, support_bank):
    result = _recall(live, support_bank, "Ann Lee", TICKETS["T-2004"].issue)
    assert result.path == "legacy"
    assert {e.document_id for e in result.legacy_admitted} == {"SUP-L-001", "SUP-L-002"}
    verdicts = {e.document_id: e.verdict for e in result.legacy_rejected}
    assert verdicts["SUP-L-003"] == verdicts["SUP-L-004"] == "other_customer_marker"  # Ann Leeds
    assert verdicts["SUP-L-005"] == "marker_not_at_start"
    assert verdicts["SUP-L-006"] == "no_marker"
    assert verdicts["SUP-T-004"] == "tagged_for_other"  # tagged for Chen Wei, mentions Ann Lee
    for doc in ("SUP-L-003", "SUP-L-004", "SUP-T-004"):
        assert doc not in {e.document_id for e in result.evidence}


@pytest.mark.parametrize(
    "customer, expected",
    [
        ("Ann Leeds", {"SUP-L-003", "SUP-L-004"}),
        ("A.J. Smith (UK)", {"SUP-L-008"}),
        ("Jo+Co Design", {"SUP-L-010"}),
        ("Sean O'Brien", {"SUP-L-007"}),
        ("Dr. Kwame Mensah", {"SUP-L-011"}),
        ("Lena Fischer", set()),
    ],
)
def test_real_server_legacy_admission_per_customer(live, support_bank, customer, expected):
    result = _recall(live, support_bank, customer, "billing and invoices")
    assert {e.document_id for e in result.legacy_admitted} == expected
    assert result.path == ("legacy" if expected else "none")


def test_a_retained_approval_is_recalled_on_the_tagged_path(live, bank_id, tmp_path):
    support_bank = f"{bank_id}-{live.mode}"
    seed_bank(live.gateway, support_bank, support_records())
    live.settle(support_bank)
    ticket = TICKETS["T-2004"]
    assert _recall(live, support_bank, ticket.customer, ticket.issue).path == "legacy"
    decision = ticket_decision(
        ticket,
        action="edit_and_approve",
        reviewer="Rita Reviewer",
        authenticated=False,
        decided_at=datetime(2026, 11, 13, 9, 30, tzinfo=UTC),
        response="Hi Ann, refunded the duplicate November charge.",
    )
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    _stored, report = outbox.submit(support_bank, decision, interaction_record(ticket, decision), live.gateway.retain)
    assert report.delivered == 1 and outbox.latest("ticket", ticket.id).state == "delivered"
    live.settle(support_bank)

    after = _recall(live, support_bank, ticket.customer, ticket.issue)
    assert after.path == "tagged"
    assert [e.document_id for e in after.tagged] == ["ticket-T-2004"]  # one document, however many facts
    assert after.tagged[0].text.startswith("Customer Ann Lee contacted support.\n\nCurrent issue:\n")
    assert "Support response:\nHi Ann, refunded the duplicate November charge." in after.tagged[0].text
    # a revised decision replaces the document, it does not add a second one
    again = ticket_decision(
        ticket, action="approve", reviewer="Rita Reviewer", authenticated=False, decided_at=datetime.now(UTC)
    )
    outbox.submit(support_bank, again, interaction_record(ticket, again), live.gateway.retain)
    stored = live.gateway.document(support_bank, "ticket-T-2004")
    assert ticket.drafted_response in stored.original_text and "Hi Ann, refunded" not in stored.original_text
    assert {
        m["document_id"] for m in live.gateway.list_memories(support_bank, document_id="ticket-T-2004")["items"]
    } == {"ticket-T-2004"}
    live.settle(support_bank)
    # Ann Leeds is untouched by Ann Lee's approval
    assert _recall(live, support_bank, "Ann Leeds", "invoice address").path == "legacy"


def test_decision_rules():
    ticket = TICKETS["T-2006"]
    now = datetime(2026, 11, 15, tzinfo=UTC)
    with pytest.raises(DecisionInputError, match="reviewer"):
        ticket_decision(ticket, action="approve", reviewer="  ", authenticated=False, decided_at=now)
    with pytest.raises(DecisionInputError, match="note"):
        ticket_decision(
            ticket, action="override", reviewer="R", authenticated=False, decided_at=now, response="Other text"
        )
    override = ticket_decision(
        ticket,
        action="override",
        reviewer="R",
        authenticated=True,
        decided_at=now,
        response="Call us.",
        note="draft guessed",
    )
    assert (override.outcome, override.overridden, override.details["response"]) == ("reject", True, "Call us.")
    record = interaction_record(ticket, override)
    assert record.document_id == "ticket-T-2006" and record.tags == ["customer:sean-o-brien"]
    assert (
        record.content
        == "Customer Sean O'Brien contacted support.\n\nCurrent issue:\n"
        + ticket.issue
        + "\n\nSupport response:\nCall us."
    )
    assert (
        record.metadata["reviewer"] == "R"
        and record.metadata["action"] == "override"
        and record.metadata["ticket_id"] == "T-2006"
    )


def _cli(live, bank, *args):
    return run_cli(live, *args, support=bank)


def test_cli_recall_ticket_json(live, support_bank):
    done = _cli(live, support_bank, "recall-ticket", "--customer", "Ann Lee", "--issue", "charged twice", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert set(payload) >= {"path", "tagged", "legacy_admitted", "legacy_rejected"}
    assert payload["path"] == "legacy" and payload["tagged"] == []
    assert {r["document_id"] for r in payload["legacy_admitted"]} == {"SUP-L-001", "SUP-L-002"}
    assert all(r["id"] and r["reason"] for r in payload["legacy_rejected"])
    tagged = json.loads(
        _cli(live, support_bank, "recall-ticket", "--customer", "Chen Wei", "--issue", "export", "--json").stdout
    )
    assert tagged["path"] == "tagged" and tagged["legacy_rejected"] == []


def test_cli_bad_input_exits_2_naming_the_field(hindsight, bank_id):
    support_bank = bank_id
    done = _cli(hindsight, support_bank, "recall-ticket", "--customer", " ", "--issue", "x", "--json")
    assert done.returncode == 2 and "--customer" in done.stderr and "Traceback" not in done.stderr
    done = _cli(hindsight, support_bank, "recall-ticket", "--customer", "Ann Lee", "--issue", "", "--json")
    assert done.returncode == 2 and "--issue" in done.stderr and "Traceback" not in done.stderr

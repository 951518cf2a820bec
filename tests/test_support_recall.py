"""Ticket recall: with a double (which calls are made) and against the real server (what comes back)."""

import json
from datetime import UTC, datetime

import pytest

from dashboard import demo_data
from dashboard.cli.seed import seed_bank, support_records
from dashboard.hindsight.wire import RecalledMemory, RecallResponse
from dashboard.queue_files import load_rows
from dashboard.review.outbox import Outbox
from dashboard.support.customers import customer_tag
from dashboard.support.decisions import TicketDecisionError, interaction_record, ticket_decision
from dashboard.support.models import Ticket
from dashboard.support.recall import recall_for_ticket
from tests.helpers import run_cli

TICKETS = {t.id: t for t in load_rows(demo_data.TICKETS, Ticket)}


class RecordingRecall:
    def __init__(self, tagged: list[RecalledMemory], bankwide: list[RecalledMemory]):
        self.tagged, self.bankwide, self.calls = tagged, bankwide, []

    def __call__(self, bank_id, query, **kwargs):
        self.calls.append(kwargs)
        return RecallResponse(results=self.tagged if kwargs.get("tags") else self.bankwide)


def memory(doc: str, text: str, tags=()) -> RecalledMemory:
    return RecalledMemory(id=f"m-{doc}", document_id=doc, text=text, tags=list(tags))


def test_tagged_results_mean_the_fallback_is_not_called():
    recall = RecordingRecall(
        tagged=[memory("t1", "Customer Ann Lee contacted support. x", [customer_tag("Ann Lee")])],
        bankwide=[memory("l1", "Customer Ann Lee contacted support. y")],
    )
    result = recall_for_ticket(recall, "bank", "Ann Lee", "charged twice")
    assert result.path == "tagged" and [e.document_id for e in result.tagged] == ["t1"]
    assert result.legacy_admitted == [] and result.legacy_rejected == []
    assert recall.calls == [{"tags": ["customer:ann-lee"], "tags_match": "any_strict", "max_tokens": 2048}]


def test_empty_tagged_runs_one_bankwide_recall_and_judges_every_candidate():
    recall = RecordingRecall(
        tagged=[],
        bankwide=[
            memory("l1", "Customer Ann Lee contacted support. y"),
            memory("l2", "Customer Ann Leeds contacted support. z"),
            memory("t9", "Customer Ann Lee contacted support. w", ["customer:chen-wei"]),
        ],
    )
    result = recall_for_ticket(recall, "bank", "Ann Lee", "charged twice")
    assert result.path == "legacy"
    assert len(recall.calls) == 2 and "tags" not in recall.calls[1]
    assert [e.document_id for e in result.evidence] == ["l1"]
    assert {e.document_id: e.verdict for e in result.legacy_rejected} == {"l2": "other_customer_marker", "t9": "tagged_for_other"}
    assert all(e.reason for e in result.legacy_admitted + result.legacy_rejected)


@pytest.fixture
def support_bank(hindsight, bank_id):
    seed_bank(hindsight.gateway, bank_id, support_records())
    return bank_id


def test_real_server_tagged_path_for_a_customer_with_tagged_history(hindsight, support_bank):
    # Priya Nair has tagged history AND a legacy record: the legacy record must not show up
    result = recall_for_ticket(hindsight.gateway.recall, support_bank, "Priya Nair", TICKETS["T-2003"].issue)
    assert result.path == "tagged"
    assert {e.document_id for e in result.tagged} == {"SUP-T-005"}
    assert all("customer:priya-nair" in e.tags for e in result.tagged)
    assert result.legacy_admitted == [] and result.legacy_rejected == []


def test_real_server_legacy_fallback_admits_only_the_right_records(hindsight, support_bank):
    result = recall_for_ticket(hindsight.gateway.recall, support_bank, "Ann Lee", TICKETS["T-2004"].issue)
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
    [("Ann Leeds", {"SUP-L-003", "SUP-L-004"}), ("A.J. Smith (UK)", {"SUP-L-008"}), ("Jo+Co Design", {"SUP-L-010"}),
     ("Sean O'Brien", {"SUP-L-007"}), ("Dr. Kwame Mensah", {"SUP-L-011"}), ("Lena Fischer", set())],
)  # fmt: skip
def test_real_server_legacy_admission_per_customer(hindsight, support_bank, customer, expected):
    result = recall_for_ticket(hindsight.gateway.recall, support_bank, customer, "billing and invoices")
    assert {e.document_id for e in result.legacy_admitted} == expected
    assert result.path == ("legacy" if expected else "none")


def test_a_retained_approval_is_recalled_on_the_tagged_path(hindsight, support_bank, tmp_path):
    ticket = TICKETS["T-2004"]
    assert recall_for_ticket(hindsight.gateway.recall, support_bank, ticket.customer, ticket.issue).path == "legacy"
    decision = ticket_decision(
        ticket, action="edit_and_approve", reviewer="Rita Reviewer", authenticated=False,
        decided_at=datetime(2026, 11, 13, 9, 30, tzinfo=UTC), response="Hi Ann, refunded the duplicate November charge.",
    )  # fmt: skip
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    _stored, report = outbox.submit(support_bank, decision, interaction_record(ticket, decision), hindsight.gateway.retain)
    assert report.delivered == 1 and outbox.latest("ticket", ticket.id).state == "delivered"

    after = recall_for_ticket(hindsight.gateway.recall, support_bank, ticket.customer, ticket.issue)
    assert after.path == "tagged"
    assert [e.document_id for e in after.tagged] == ["ticket-T-2004"]
    assert after.tagged[0].text.startswith("Customer Ann Lee contacted support.\n\nCurrent issue:\n")
    assert "Support response:\nHi Ann, refunded the duplicate November charge." in after.tagged[0].text
    # a revised decision replaces the memory, it does not add a second one
    again = ticket_decision(ticket, action="approve", reviewer="Rita Reviewer", authenticated=False, decided_at=datetime.now(UTC))
    outbox.submit(support_bank, again, interaction_record(ticket, again), hindsight.gateway.retain)
    listed = hindsight.gateway.list_memories(support_bank, document_id="ticket-T-2004")["items"]
    assert len(listed) == 1 and ticket.drafted_response in listed[0]["text"]
    # Ann Leeds is untouched by Ann Lee's approval
    assert recall_for_ticket(hindsight.gateway.recall, support_bank, "Ann Leeds", "invoice address").path == "legacy"


def test_decision_rules():
    ticket = TICKETS["T-2006"]
    now = datetime(2026, 11, 15, tzinfo=UTC)
    with pytest.raises(TicketDecisionError, match="reviewer"):
        ticket_decision(ticket, action="approve", reviewer="  ", authenticated=False, decided_at=now)
    with pytest.raises(TicketDecisionError, match="note"):
        ticket_decision(ticket, action="override", reviewer="R", authenticated=False, decided_at=now, response="Other text")
    override = ticket_decision(ticket, action="override", reviewer="R", authenticated=True, decided_at=now, response="Call us.", note="draft guessed")
    assert (override.outcome, override.overridden, override.final_response) == ("reject", True, "Call us.")
    record = interaction_record(ticket, override)
    assert record.document_id == "ticket-T-2006" and record.tags == ["customer:sean-o-brien"]
    assert record.content == "Customer Sean O'Brien contacted support.\n\nCurrent issue:\n" + ticket.issue + "\n\nSupport response:\nCall us."
    assert record.metadata["reviewer"] == "R" and record.metadata["action"] == "override" and record.metadata["ticket_id"] == "T-2006"


def _cli(hindsight, bank, *args):
    return run_cli(hindsight, *args, support=bank)


def test_cli_recall_ticket_json(hindsight, support_bank):
    done = _cli(hindsight, support_bank, "recall-ticket", "--customer", "Ann Lee", "--issue", "charged twice", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert set(payload) >= {"path", "tagged", "legacy_admitted", "legacy_rejected"}
    assert payload["path"] == "legacy" and payload["tagged"] == []
    assert {r["document_id"] for r in payload["legacy_admitted"]} == {"SUP-L-001", "SUP-L-002"}
    assert all(r["id"] and r["reason"] for r in payload["legacy_rejected"])
    tagged = json.loads(_cli(hindsight, support_bank, "recall-ticket", "--customer", "Chen Wei", "--issue", "export", "--json").stdout)
    assert tagged["path"] == "tagged" and tagged["legacy_rejected"] == []


def test_cli_bad_input_exits_2_naming_the_field(hindsight, support_bank):
    done = _cli(hindsight, support_bank, "recall-ticket", "--customer", " ", "--issue", "x", "--json")
    assert done.returncode == 2 and "--customer" in done.stderr and "Traceback" not in done.stderr
    done = _cli(hindsight, support_bank, "recall-ticket", "--customer", "Ann Lee", "--issue", "", "--json")
    assert done.returncode == 2 and "--issue" in done.stderr and "Traceback" not in done.stderr

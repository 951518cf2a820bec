"""A row its writer sends at once (a reviewer's decision, a confirmed second approval, an agreeing blind review, an
approved curation) is sent by that writer's request, even when a delivery worker polls the store between the
write and the writer's attempt: else the reviewer is told "delivered when Hindsight answers" about a row a worker
is delivering (two instances on one store found it). Against the real Hindsight; the worker's poll is put into
that gap on purpose."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from dashboard.access.limits import ApprovalLimits
from dashboard.delivery.outbox import Outbox
from dashboard.delivery.worker import DeliveryWorker
from dashboard.finance.decisions import document_id_for
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.curation import Curation
from dashboard.store.decision import ReviewerDecision
from dashboard.store.delivery_queue import LEASE_S
from tests.finance_helpers import precedent
from tests.helpers import demo_case, recalled_proposal

CASE = demo_case("E-1002")  # V02 price variance, 1,890.00


class Poller:
    """A delivery worker of another instance, polling the store right after a given write."""

    def __init__(self, queue, send):
        self.worker = DeliveryWorker(queue, send, name="another-instance")
        self.delivered_in_gap: list[int] = []

    def after(self, monkeypatch, owner, method: str) -> None:
        write = getattr(owner, method)

        def write_then_poll(*args, **kwargs):
            result = write(*args, **kwargs)
            self.delivered_in_gap.append(self.worker.run_once().delivered)
            return result

        monkeypatch.setattr(owner, method, write_then_poll)


@pytest.fixture
def bank(hindsight) -> str:
    bank_id = f"own-{uuid.uuid4().hex[:8]}"
    hindsight.gateway.ensure_bank(bank_id)
    hindsight.gateway.retain(
        bank_id, [precedent("PREC-O-1", CASE.vendor_code, CASE.exception_type, "reject", "2025-03-01")]
    )
    return bank_id


def _in_memory(hindsight, bank: str) -> bool:
    return hindsight.gateway.document(bank, document_id_for(CASE.id)) is not None


def test_a_decision_is_sent_by_its_reviewer_not_by_a_worker_polling_after_the_write(
    hindsight, bank, tmp_path, monkeypatch, scratch_service
):
    service = scratch_service(hindsight.gateway.retain)
    poller = Poller(service.outbox, hindsight.gateway.retain)
    poller.after(monkeypatch, service.outbox, "record")
    done = service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana"))
    assert poller.delivered_in_gap == [0]  # the row was there, leased to its writer
    assert (done.delivered, done.report.delivered, done.stored.state) == (True, 1, "delivered")
    assert _in_memory(hindsight, bank)


def test_a_confirmed_second_approval_is_sent_by_the_approver(hindsight, bank, tmp_path, monkeypatch, scratch_service):
    service = scratch_service(hindsight.gateway.retain, limits=ApprovalLimits({"reviewer": 1_000, "lead": 50_000}))
    held = service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana"))
    assert held.stored.state == "awaiting_approval"
    poller = Poller(service.outbox, hindsight.gateway.retain)
    poller.after(monkeypatch, service.approvals, "settle")
    done = service.second_approval(bank, "lead", "exception", CASE.id, "Lee", confirm=True)
    assert poller.delivered_in_gap == [0]
    assert (done.report.delivered, done.stored.state) == (1, "delivered") and _in_memory(hindsight, bank)


def test_an_agreeing_blind_second_review_is_sent_by_the_second_reviewer(
    hindsight, bank, tmp_path, monkeypatch, scratch_service
):
    service = scratch_service(hindsight.gateway.retain, second_review_share=1.0)
    first = service.decide(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Dana"))
    assert first.blind and not _in_memory(hindsight, bank)
    poller = Poller(service.outbox, hindsight.gateway.retain)
    poller.after(monkeypatch, service.second_reviews, "record_second")
    done = service.second_review(bank, "reviewer", recalled_proposal(hindsight, bank, CASE, "Kim"))
    assert poller.delivered_in_gap == [0]
    assert (done.report.delivered, done.stored.state) == (1, "delivered") and _in_memory(hindsight, bank)


def test_an_approved_curation_is_sent_by_the_approving_lead(hindsight, bank, tmp_path, monkeypatch):
    curation = Curation(tmp_path / "store.sqlite3", hindsight.gateway.set_document_state)
    proposal = curation.propose(
        bank, "PREC-O-1", role="reviewer", proposer="Dana", label="outdated", reason="contract ended"
    )
    poller = Poller(curation, hindsight.gateway.set_document_state)
    poller.after(monkeypatch, curation, "_append")
    approval, report = curation.approve(proposal.id, role="lead", lead="Lee")
    assert poller.delivered_in_gap == [0]
    assert (approval.state, report.delivered) == ("delivered", 1)
    assert hindsight.gateway.list_memories(bank, document_id="PREC-O-1", state="invalidated")["total"] == 1


def test_with_no_sender_a_row_is_the_workers_at_once_and_a_writer_that_died_leaves_it_to_them(tmp_path):
    sent: list[str] = []
    clock = [datetime(2026, 12, 3, 12, 0, tzinfo=UTC)]
    outbox = Outbox(tmp_path / "store.sqlite3", clock=lambda: clock[0])
    worker = DeliveryWorker(outbox, lambda bank, records: sent.extend(r.document_id for r in records), name="worker")
    decision = ReviewerDecision(
        case_id="E-1",
        case_kind="exception",
        reviewer="Dana",
        authenticated=False,
        outcome="approve",
        overridden=False,
        decided_at=clock[0],
    )

    outbox.record(
        "fin", decision, MemoryRecord(document_id="decision-E-1", content="x")
    )  # no writer: the workers' at once
    assert worker.run_once().delivered == 1

    outbox.record(
        "fin",
        decision.model_copy(update={"case_id": "E-2"}),
        MemoryRecord(document_id="decision-E-2", content="y"),
        writer="a-request-that-died",
    )
    assert worker.run_once().delivered == 0  # leased to its writer
    clock[0] += timedelta(seconds=LEASE_S + 1)
    assert worker.run_once().delivered == 1 and sent == ["decision-E-1", "decision-E-2"]

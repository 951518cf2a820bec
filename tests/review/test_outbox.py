"""Durable decision delivery: unit tests with a failing retain, and the real server."""

from datetime import UTC, datetime, timedelta

from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.errors import HindsightUnavailable
from dashboard.hindsight.wire import MemoryRecord
from tests.helpers import plain_decision


class Clock:
    def __init__(self):
        self.now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

    def __call__(self):
        return self.now


def _memory(case_id="E-1", text="approved"):
    return MemoryRecord(document_id=f"decision-{case_id}", content=text, tags=["vendor:V01"])


def test_failed_delivery_is_kept_backed_off_and_retried(tmp_path):
    clock, sent, down = Clock(), [], [True]

    def retain(bank, records):
        if down[0]:
            raise HindsightUnavailable("connection refused")
        sent.extend((bank, r.document_id) for r in records)

    outbox = Outbox(tmp_path / "decisions.sqlite3", clock=clock)
    outbox.record("fin", plain_decision(), _memory())
    first = outbox.deliver_due(retain)
    assert (first.delivered, first.still_pending, first.error) == (0, 1, "connection refused")

    down[0] = False
    assert outbox.deliver_due(retain).delivered == 0  # backing off: not due yet
    clock.now += timedelta(seconds=1.5)
    assert outbox.deliver_due(retain).delivered == 1
    assert sent == [("fin", "decision-E-1")]
    (entry,) = outbox.history()
    assert entry.state == "delivered" and entry.attempts == 2 and entry.last_error is None

    # Survives a new process: a second Outbox on the same file sees the same log.
    assert [e.id for e in Outbox(tmp_path / "decisions.sqlite3").history()] == [entry.id]


def test_revised_decision_supersedes_the_undelivered_one(tmp_path):
    sent = []
    outbox = Outbox(tmp_path / "d.sqlite3", clock=Clock())
    outbox.record("fin", plain_decision(outcome="approve"), _memory(text="approve"))
    outbox.record("fin", plain_decision(outcome="reject"), _memory(text="reject"))
    report = outbox.deliver_due(lambda bank, records: sent.extend(r.content for r in records))
    assert (report.delivered, report.superseded) == (1, 1) and sent == ["reject"]
    assert [e.state for e in outbox.history()] == ["delivered", "superseded"]
    assert outbox.latest("exception", "E-1").decision.outcome == "reject"


def test_delivery_to_the_real_server_is_idempotent(hindsight, bank_id, tmp_path):
    outbox = Outbox(tmp_path / "d.sqlite3")
    for text in ("first decision", "revised decision"):
        outbox.record(bank_id, plain_decision(), _memory(text=text))
        assert outbox.deliver_due(hindsight.gateway.retain).delivered == 1
    stored = hindsight.gateway.list_memories(bank_id)
    assert [item["text"] for item in stored["items"]] == ["revised decision"]

"""No decision lost: Hindsight goes down mid-review and comes back."""

from collections import Counter

from dashboard.review.outbox import Outbox
from tests.helpers import numbered_decision


def test_twenty_decisions_while_down_arrive_exactly_once(hindsight, bank_id, tmp_path):
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    sent = Counter()

    def counting_retain(bank, records):
        hindsight.gateway.retain(bank, records)  # raises while the server is down
        sent.update(r.document_id for r in records)

    hindsight.server.stop()
    try:
        for i in range(20):
            outbox.record(bank_id, *numbered_decision(i))
            report = outbox.deliver_due(counting_retain)
            assert report.delivered == 0 and report.error
        assert outbox.pending_count() == 20 and not sent
    finally:
        hindsight.server.start()

    outbox.retry_now()
    report = outbox.deliver_due(counting_retain)
    assert (report.delivered, report.still_pending, report.error) == (20, 0, None)
    assert outbox.deliver_due(counting_retain).delivered == 0
    assert set(sent.values()) == {1} and len(sent) == 20

    stored = hindsight.gateway.list_memories(bank_id, limit=100)
    assert stored["total"] == 20
    assert Counter(item["document_id"] for item in stored["items"]) == Counter({f"decision-E-{i:04d}": 1 for i in range(20)})

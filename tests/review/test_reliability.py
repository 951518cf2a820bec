"""No decision lost: Hindsight goes out of reach mid-review and comes back."""

from collections import Counter

from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.gateway import HindsightGateway
from tests.helpers import numbered_decision
from tests.outage import Outage


def test_twenty_decisions_while_down_arrive_exactly_once(hindsight, bank_id, tmp_path):
    outbox = Outbox(tmp_path / "decisions.sqlite3")
    sent = Counter()
    with Outage(hindsight.settings.base_url) as path:
        gateway = HindsightGateway(path.url)

        def counting_retain(bank, records):
            gateway.retain(bank, records)  # raises while Hindsight is out of reach
            sent.update(r.document_id for r in records)

        path.down()
        for i in range(20):
            outbox.record(bank_id, *numbered_decision(i))
            report = outbox.deliver_due(counting_retain)
            assert report.delivered == 0 and report.error
        assert outbox.pending_count() == 20 and not sent

        path.up()
        outbox.retry_now()
        report = outbox.deliver_due(counting_retain)
        assert (report.delivered, report.still_pending, report.error) == (20, 0, None)
        assert outbox.deliver_due(counting_retain).delivered == 0
        gateway.close()
    assert set(sent.values()) == {1} and len(sent) == 20

    stored = hindsight.gateway.list_memories(bank_id, limit=100)
    assert stored["total"] == 20
    assert Counter(item["document_id"] for item in stored["items"]) == Counter(
        {f"decision-E-{i:04d}": 1 for i in range(20)}
    )

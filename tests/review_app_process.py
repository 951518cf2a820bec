"""One "app process" of the team delivery test: records decisions into a shared review store the way the
Exceptions page does (submit, which delivers its own row when it can) with a delivery worker thread
running beside it, as in every app process. Prints {"recorded": n, "delivered": n} when done.

    python -m tests.review_app_process <store url> <bank> <first case number> <count>
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime

from dashboard.delivery.outbox import Outbox
from dashboard.delivery.worker import DeliveryWorker
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryRecord
from dashboard.settings import load_settings
from dashboard.store.db import make_engine, upgrade
from dashboard.store.decision import ReviewerDecision


def main(url: str, bank: str, first: int, count: int) -> None:
    settings = load_settings()
    engine = make_engine(url, settings.data_dir)
    upgrade(engine)
    outbox = Outbox(engine)
    gateway = HindsightGateway(settings.base_url, timeout=10)
    worker = DeliveryWorker(outbox, gateway.retain, idle_s=0.2).start()
    inline = 0
    for i in range(first, first + count):
        case = f"E-{i:04d}"
        decision = ReviewerDecision(
            case_id=case,
            case_kind="exception",
            reviewer=f"Reviewer {first}",
            authenticated=False,
            outcome="approve",
            overridden=False,
            decided_at=datetime.now(UTC),
        )
        memory = MemoryRecord(
            document_id=f"decision-{case}",
            content=f"Exception {case}: approved by reviewer {first}.",
            tags=["kind:decision"],
        )
        stored, report = outbox.submit(bank, decision, memory, gateway.retain, base_revision=0)
        inline += report.delivered
        time.sleep(0.1)
    deadline = time.monotonic() + 240
    while outbox.pending_count() and time.monotonic() < deadline:
        time.sleep(0.2)
    worker.stop()
    gateway.close()
    print(json.dumps({"recorded": count, "delivered": inline + worker.delivered}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))

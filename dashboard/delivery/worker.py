"""The delivery worker: sends recorded decisions (and approved curation) to Hindsight off the request path.

One runs as a thread in every app process (unless configured off) and any number more as
`python -m dashboard worker`; they share the review store and claim rows with a lease, so each row is
delivered by one of them. No Streamlit here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.calls import RetainFn
from dashboard.store.delivery_queue import CLAIM_BATCH, DeliveryQueue, DeliveryReport, worker_name

log = logging.getLogger(__name__)
IDLE_S = 2.0  # how often an idle worker looks for new rows (another instance may have recorded some)


class DeliveryWorker:
    def __init__(
        self,
        outbox: Outbox,
        retain: RetainFn,
        *,
        idle_s: float = IDLE_S,
        on_delivered: Callable[[DeliveryReport], None] | None = None,
        name: str | None = None,
        also: Sequence[tuple[DeliveryQueue, Callable]] = (),
    ):
        """`also`: more queues of the same store and what each sends with, e.g. (Curation, gateway.set_document_state),
        (WebhookEvents, post_webhook). `on_delivered` hears of passes that delivered rows into memory."""
        self.outbox = outbox
        self.retain = retain
        self.queues: list[tuple[DeliveryQueue, Callable]] = [(outbox, retain), *also]
        self.idle_s = idle_s
        self.on_delivered = on_delivered
        self.name = name or worker_name()
        self.delivered = 0  # rows this worker delivered since it started
        self.last_report: DeliveryReport | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> DeliveryReport:
        """One pass over every queue: claim due rows, deliver them, report (summed). Never raises for a delivery failure."""
        report, into_memory = DeliveryReport(), 0
        for queue, send in self.queues:
            one = queue.deliver_due(send, owner=self.name)
            into_memory += one.delivered if queue.changes_memory else 0
            report = DeliveryReport(
                delivered=report.delivered + one.delivered,
                failed=report.failed + one.failed,
                superseded=report.superseded + one.superseded,
                still_pending=report.still_pending + one.still_pending,
                error=report.error or one.error,
            )
        self.last_report = report
        self.delivered += report.delivered
        if into_memory and self.on_delivered is not None:
            self.on_delivered(report)
        return report

    def _pause(self, report: DeliveryReport) -> float:
        if report.error is None and report.delivered + report.failed + report.superseded >= CLAIM_BATCH:
            return 0.0  # a full batch went through: more may be due
        due = [d for d in (queue.next_due_in() for queue, _ in self.queues) if d is not None]
        due_in = min(due, default=None)
        return self.idle_s if due_in is None else min(self.idle_s, max(due_in, 0.05))

    def run(self, stop: threading.Event | None = None) -> None:
        """Deliver until `stop` (or `self.stop()`) is set."""
        stop = stop or self._stop
        while not stop.is_set() and not self._stop.is_set():
            try:
                report = self.run_once()
                pause = self._pause(report)
            except Exception:
                log.exception("delivery pass failed")
                pause = self.idle_s
            self._wake.wait(pause)
            self._wake.clear()

    def wake(self) -> None:
        """Look for due rows now (a reviewer pressed "deliver now")."""
        self._wake.set()

    def start(self) -> DeliveryWorker:
        self._thread = threading.Thread(target=self.run, name=f"delivery-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

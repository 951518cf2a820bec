"""What the runtime layer saw of its own recalls: wall-time samples and the latest result per case.

The Overview page reads it. One instance per server process (app.state.recall_log()); everything is
bounded: the last `samples` latencies per kind and the `results` most recently used recall results
per kind (cachetools' LRUCache). Thread-safe (Streamlit runs each session on its own thread): every
access holds the lock. No Streamlit here.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from cachetools import LRUCache
from pydantic import BaseModel

from dashboard.finance.recall import TwoStageResult
from dashboard.support.recall import TicketRecall

MAX_SAMPLES = 500
MAX_RESULTS = 500


class LatencySample(BaseModel):
    kind: str  # e.g. "finance two-stage", "ticket", "trace"
    at: datetime
    ms: float
    ok: bool


class RecallLog:
    def __init__(self, samples: int = MAX_SAMPLES, results: int = MAX_RESULTS):
        self._lock = threading.Lock()
        self._samples_per_kind = samples
        self._latency: dict[str, deque[LatencySample]] = {}
        self._finance: LRUCache[tuple[str, str, str, str], TwoStageResult] = LRUCache(maxsize=results)
        self._tickets: LRUCache[tuple[str, str, str], TicketRecall] = LRUCache(maxsize=results)

    # -- latency ------------------------------------------------------------------
    def add_latency(self, kind: str, ms: float, ok: bool = True, at: datetime | None = None) -> None:
        sample = LatencySample(kind=kind, at=at or datetime.now(UTC), ms=round(ms, 2), ok=ok)
        with self._lock:
            self._latency.setdefault(kind, deque(maxlen=self._samples_per_kind)).append(sample)

    @contextmanager
    def timed(self, kind: str) -> Iterator[None]:
        """Measure the wall time of the block; a failed call is recorded too (ok=False) and re-raised."""
        start = time.perf_counter()
        ok = False
        try:
            yield
            ok = True
        finally:
            self.add_latency(kind, (time.perf_counter() - start) * 1000.0, ok)

    def latencies(self) -> list[LatencySample]:
        with self._lock:
            return [s for samples in self._latency.values() for s in samples]

    # -- latest results -----------------------------------------------------------
    def add_finance(self, result: TwoStageResult) -> None:
        key = (result.bank_id, result.key.vendor_code, result.key.exception_type, result.query)
        with self._lock:
            self._finance[key] = result

    def finance_result(self, bank_id: str, vendor: str, etype: str, query: str) -> TwoStageResult | None:
        with self._lock:
            return self._finance.get((bank_id, vendor, etype, query.strip()))

    def add_ticket(self, bank_id: str, issue: str, recall: TicketRecall) -> None:
        with self._lock:
            self._tickets[(bank_id, recall.customer, issue.strip())] = recall

    def ticket_result(self, bank_id: str, customer: str, issue: str) -> TicketRecall | None:
        with self._lock:
            return self._tickets.get((bank_id, " ".join(customer.split()), issue.strip()))

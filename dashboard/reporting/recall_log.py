"""The wall time of this server process's own recalls, for the Overview's latency figures.

One instance per server process; bounded (the last `samples` latencies per kind). Thread-safe
(Streamlit runs each session on its own thread): every access holds the lock. No Streamlit here.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from pydantic import BaseModel

MAX_SAMPLES = 500


class LatencySample(BaseModel):
    kind: str  # e.g. "finance two-stage", "ticket", "trace"
    at: datetime
    ms: float
    ok: bool


class RecallLog:
    def __init__(self, samples: int = MAX_SAMPLES):
        self._lock = threading.Lock()
        self._samples_per_kind = samples
        self._latency: dict[str, deque[LatencySample]] = {}

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

"""Recall results cached per (bank, query, tags, mode, k), invalidated per (bank, vendor, type).

One instance per server process (app.state.recall_cache()), shared by the case view and the queue
loader: a case whose recall the queue loaded opens without a network call. A decision retained for a
vendor and type bumps that pair's generation, so only its entries are recalled again; a TTL picks up
what other writers (agents, other dashboard instances) retained meanwhile. Bounded (LRU) and TTL by
cachetools' TTLCache, which is not thread-safe on its own: every access holds the lock. No Streamlit here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from cachetools import TTLCache

from dashboard.finance.recall import CaseKey, TwoStageResult

MAX_ENTRIES = 5000  # a TwoStageResult is a few KB: ~20 MB at most
TTL_S = 300.0


class RecallCache:
    def __init__(self, max_entries: int = MAX_ENTRIES, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic):
        self._lock = threading.Lock()
        self._items: TTLCache[tuple, TwoStageResult] = TTLCache(maxsize=max_entries, ttl=ttl_s, timer=clock)
        self._generations: dict[tuple[str, str, str], int] = {}

    def generation(self, bank_id: str, key: CaseKey) -> int:
        with self._lock:
            return self._generations.get((bank_id, key.vendor_code, key.exception_type), 0)

    def _key(self, bank_id: str, key: CaseKey, query: str, k: int, mode: str) -> tuple:
        gen = self._generations.get((bank_id, key.vendor_code, key.exception_type), 0)
        return (bank_id, query.strip(), tuple(key.tags), key.vendor_name, mode, k, gen)

    def get(self, bank_id: str, key: CaseKey, query: str, k: int, mode: str = "two-stage") -> TwoStageResult | None:
        with self._lock:
            return self._items.get(self._key(bank_id, key, query, k, mode))

    def put(self, result: TwoStageResult, query: str | None = None, mode: str = "two-stage") -> None:
        """Store under the query as asked (default: the result's own, stripped)."""
        with self._lock:
            slot = self._key(result.bank_id, result.key, query if query is not None else result.query, result.k, mode)
            self._items[slot] = result

    def invalidate(self, bank_id: str, key: CaseKey) -> None:
        """A decision was retained for this vendor and type: its entries are stale (others are kept)."""
        with self._lock:
            pair = (bank_id, key.vendor_code, key.exception_type)
            self._generations[pair] = self._generations.get(pair, 0) + 1
            for slot in [s for s in self._items if s[0] == bank_id and s[2] == tuple(key.tags)]:
                del self._items[slot]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

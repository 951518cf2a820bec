"""A bounded, expiring, thread-safe cache of recall results for one server process.

cachetools' TTLCache bounds the entries (LRU) and expires them (a TTL picks up what other writers, e.g.
agents, retained meanwhile); it is not thread-safe on its own, so every access holds the lock: the
sessions' script threads and the background prefetch share it. Callers put a freshness stamp in their
keys, so a decision anywhere makes its scope's entries unreachable at once. No Streamlit here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from cachetools import TTLCache

MAX_ENTRIES = 5000  # a recall result is a few KB: ~20 MB at most
TTL_S = 300.0


class RecallCache:
    def __init__(self, max_entries: int = MAX_ENTRIES, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic):
        self._lock = threading.Lock()
        self._items: TTLCache[Hashable, Any] = TTLCache(maxsize=max_entries, ttl=ttl_s, timer=clock)

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

"""A bounded, expiring, thread-safe cache of recall results for one server process.

cachetools' TTLCache bounds the entries (LRU) and expires them (a TTL picks up what other writers, e.g.
agents, retained meanwhile); it is not thread-safe on its own, so every access holds the lock: the
sessions' script threads and the background prefetch share it. Callers put a freshness stamp in their
keys, so a decision anywhere makes its scope's entries unreachable at once. An entry being computed is marked
in flight, so a page that needs it waits for that answer instead of asking the one-core server a second time
while it is busy with the first. No Streamlit here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

from cachetools import TTLCache

MAX_ENTRIES = 5000  # a recall result is a few KB: ~20 MB at most
TTL_S = 300.0


class RecallCache:
    def __init__(
        self, max_entries: int = MAX_ENTRIES, ttl_s: float = TTL_S, clock: Callable[[], float] = time.monotonic
    ):
        self._lock = threading.Lock()
        self._items: TTLCache[Hashable, Any] = TTLCache(maxsize=max_entries, ttl=ttl_s, timer=clock)
        self._in_flight: dict[Hashable, threading.Event] = {}

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            return self._items.get(key)

    @contextmanager
    def computing(self, key: Hashable) -> Iterator[None]:
        """Marks `key` in flight while the block computes it (the block puts the value before it ends)."""
        done = threading.Event()
        with self._lock:
            self._in_flight[key] = done
        try:
            yield
        finally:
            with self._lock:
                if self._in_flight.get(key) is done:
                    del self._in_flight[key]
            done.set()

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any], wait_s: float) -> tuple[Any, bool]:
        """(the entry, whether this call computed it). One computation per key at a time for the whole process: the
        first caller computes while the others wait for its answer (up to `wait_s`, then compute themselves), so
        sessions opening the same case at once ask the server once."""
        with self._lock:
            value = self._items.get(key)
            pending = self._in_flight.get(key) if value is None else None
            mine = value is None and pending is None
            if mine:
                done = self._in_flight[key] = threading.Event()
        if value is not None:
            return value, False
        if pending is not None:
            pending.wait(wait_s)
            if (value := self.get(key)) is not None:
                return value, False
            value = compute()  # its computation failed or is late: ask, but leave the slot to its owner
            self.put(key, value)
            return value, True
        try:
            value = compute()
            self.put(key, value)
            return value, True
        finally:
            with self._lock:
                if self._in_flight.get(key) is done:
                    del self._in_flight[key]
            done.set()

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

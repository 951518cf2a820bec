"""What a page derives on every run from objects it gets back unchanged, kept while they are the same objects: the
queue file's rows (queue_files.shared_rows, one tuple while the file's bytes stay) and the decision states (one
mapping until the log moves). Compared by identity, never by hashing 100,000 models: at that size filtering, sorting
and listing the ids of the exception queue took ~0.15 s of every full run of the page (docs/scaling.md item 3).
Shared by every session of the process; what it keeps is read-only."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

KEPT = 8  # answers kept, the least recently used given up first: a few filter settings of a few queues


class _Kept(NamedTuple):
    made_from: tuple[object, ...]  # held, so no other object can take their ids while this is kept
    choices: Hashable
    answer: Any


class KeptWhileSame:
    def __init__(self) -> None:
        self._kept: list[_Kept] = []
        self._lock = threading.Lock()

    def get(self, made_from: tuple[object, ...], choices: Hashable, make: Callable[[], Any]) -> Any:
        """`make()`'s answer, made from the objects `made_from` with these `choices`; kept while both are the same."""
        with self._lock:
            for n, kept in enumerate(self._kept):
                if (
                    kept.choices == choices
                    and len(kept.made_from) == len(made_from)
                    and all(a is b for a, b in zip(kept.made_from, made_from, strict=True))
                ):
                    self._kept.insert(0, self._kept.pop(n))  # in use: the last to give way
                    return kept.answer
        answer = make()
        with self._lock:
            self._kept = [_Kept(made_from, choices, answer), *self._kept][:KEPT]
        return answer


kept_while_same = KeptWhileSame()


def ids_of(rows: Sequence) -> list[str]:
    """The rows' ids in order, one list while `rows` is the same object (a queue file's shared rows)."""
    return kept_while_same.get((rows,), "ids", lambda: [r.id for r in rows])

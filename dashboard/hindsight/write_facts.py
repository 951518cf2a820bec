"""What the server itself says of records that could be a burst (trust/bursts.py), asked only for the few that could
decide a case together: those of unknown origin, none when fewer than a burst, at most MAX_CHECKED.

- When it wrote each document: the document's `created_at`, the server's own clock. The time a recall returns
  (`mentioned_at`) is the one the writer chose, so six notes retained in one minute can claim six months.
- Which texts mean the same: one recall with each record's own text; every other candidate whose facts come back with
  a semantic score (the cosine of the bank's embeddings) of SAME_MEANING or more is alike (bursts joins them through
  any member). Paraphrases share few words, not their meaning.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime

from cachetools import TTLCache

from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.gateway import MAX_QUERY_CHARS, HindsightGateway
from dashboard.trust.bursts import MIN_BURST, Candidate, ServerView

MAX_CHECKED = 12
# Measured with the bank's MiniLM (verbatim server): six paraphrases of one approval 0.51-0.79 to each other; three
# notes on one vendor's variance for different reasons 0.37-0.55. Meaning alone cannot part them, so a pair is only a
# pair: a burst still needs three records alike and written by the server within a day.
SAME_MEANING = 0.5
# What the server said, by server, bank and the records asked about: a queue, the agents and the case page judging the
# same poisoned case ask once (up to 12 reads and 12 recalls), not on every run. A changed record set is a new key;
# the TTL bounds how long a document rewritten under the same id and text keeps its old write time.
_SAID: TTLCache = TTLCache(maxsize=512, ttl=300)
_SAID_LOCK = threading.Lock()


def _written(stored) -> datetime | None:
    try:
        return datetime.fromisoformat(stored.created_at) if stored is not None and stored.created_at else None
    except ValueError:
        return None


def server_view(gateway: HindsightGateway, bank_id: str, candidates: Sequence[Candidate]) -> ServerView:
    """The server's write time of each candidate's document and the pairs it finds alike (see the module). Where the
    server cannot answer, nothing is known from it: bursts fall back to the writer's times and words, and the rule
    (records of unknown origin that swing a case escalate it) still stands."""
    if len(candidates) < MIN_BURST:
        return ServerView()
    key = (getattr(gateway, "base_url", id(gateway)), bank_id, frozenset(candidates[:MAX_CHECKED]))
    with _SAID_LOCK:
        said = _SAID.get(key)
    if said is not None:
        return said
    try:
        said = _asked(gateway, bank_id, candidates)
    except HindsightError:
        return ServerView()  # not kept: asked again once the server answers
    with _SAID_LOCK:
        _SAID[key] = said
    return said


def _asked(gateway: HindsightGateway, bank_id: str, candidates: Sequence[Candidate]) -> ServerView:
    checked = list(candidates[:MAX_CHECKED])
    written = {
        c.id: at for c in checked if c.document_id and (at := _written(gateway.document(bank_id, c.document_id)))
    }
    alike: set[frozenset[str]] = set()
    for lead in checked:
        response = gateway.recall(bank_id, lead.text[:MAX_QUERY_CHARS], budget="low")
        closest: dict[str, float] = {}
        for memory in response.results:
            if memory.document_id and memory.scores.semantic is not None:
                closest[memory.document_id] = max(closest.get(memory.document_id, 0.0), memory.scores.semantic)
        alike |= {
            frozenset((lead.id, c.id))
            for c in checked
            if c is not lead and closest.get(c.document_id or "", 0.0) >= SAME_MEANING
        }
    return ServerView(written=written, alike=frozenset(alike))


def asker(gateway: HindsightGateway, bank_id: str):
    """server_view bound to one bank, as finance.trust.mark_trust and support.trust.origins_in_words take it (the case
    and ticket pages, recall-exception, the agents, bulk approval and the queue's flags)."""
    return lambda candidates: server_view(gateway, bank_id, candidates)

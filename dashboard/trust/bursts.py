"""Bursts: many near-identical records from one origin in a short window (hindsight #3558's "repetition": an attacker
corroborates a forged fact by retaining it again and again). A burst is flagged so that it votes once. Pure, no I/O.

Two texts are near-identical when their word 3-shingles overlap by SIMILARITY (Jaccard) or more, read the way the
screen reads them (trust/screen.py: compatibility-folded, case-folded, invisible characters dropped) and with every
word that holds a digit (document ids, invoice numbers, amounts, dates, percentages) masked, together with a month name
beside one: "decision-E-1777 ... 1,200.00" and "decision-E-1778 ... 1,250.00" are the same template. Two texts are
also near-identical when the bank's own embeddings say they mean the same (`alike`, from the server: paraphrases share
few words), and a burst's window is best read on the server's own write time, not a timestamp the writer chose
(hindsight/write_facts.py asks the server for both).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from dashboard.trust.screen import view

MIN_BURST = 3
WINDOW = timedelta(hours=24)
SIMILARITY = 0.8
SHINGLE = 3
_MASK = "#"
_MONTHS = frozenset(
    [
        "jan",
        "feb",
        "mar",
        "apr",
        "may",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)
_EDGE_PUNCTUATION = ".,;:!?()[]{}\"'"


class Item(Protocol):
    """A record as bursts reads it; `origin` is who wrote it (records of one origin are compared), `at` when."""

    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def at(self) -> datetime | None: ...


@dataclass(frozen=True)
class Record:
    """An Item as a caller builds one from a recalled record (`at`: see `when`)."""

    id: str
    text: str
    origin: str
    at: datetime | None = None


@dataclass(frozen=True)
class ServerView:
    """What the bank's server says of records that could be a burst: when it wrote each (its own clock), by record id,
    and the pairs of record ids whose texts its embeddings find the same in meaning."""

    written: Mapping[str, datetime] = field(default_factory=dict)
    alike: frozenset[frozenset[str]] = frozenset()


@dataclass(frozen=True)
class Candidate:
    """A record the server is asked about: its id as bursts names it, its document, its text."""

    id: str
    document_id: str | None
    text: str


AskServer = Callable[[Sequence[Candidate]], ServerView]  # bound to a bank: hindsight/write_facts.py


def when(iso: str | None) -> datetime | None:
    """A record's time from its ISO 8601 text (Hindsight's mentioned_at), or None when absent or unreadable."""
    try:
        return datetime.fromisoformat(iso) if iso else None
    except ValueError:
        return None


class Burst(BaseModel):
    """Near-identical records of one origin: their ids in input order, and what a reader is told."""

    model_config = ConfigDict(frozen=True)

    ids: tuple[str, ...]
    origin: str
    summary: str


def template(text: str) -> tuple[str, ...]:
    """The words of a text with the ones that vary between copies masked (runs of masks as one)."""
    words = [w.strip(_EDGE_PUNCTUATION) for w in view(text).text.split()]
    masked = [_MASK if any(c.isdigit() for c in w) else w for w in words if w]
    masked = [_MASK if w in _MONTHS and _MASK in masked[max(i - 1, 0) : i + 2] else w for i, w in enumerate(masked)]
    return tuple(w for i, w in enumerate(masked) if not (w == _MASK and i and masked[i - 1] == _MASK))


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    words = template(text)
    if len(words) < SHINGLE:
        return frozenset([words])
    return frozenset(words[i : i + SHINGLE] for i in range(len(words) - SHINGLE + 1))


def similarity(a: frozenset, b: frozenset) -> float:
    """Jaccard similarity of two shingle sets."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def _utc(at: datetime) -> datetime:
    return at if at.tzinfo else at.replace(tzinfo=UTC)  # a naive time is read as UTC, so times always compare


def _groups(items: Sequence[Item], alike: Collection[frozenset[str]]) -> list[list[int]]:
    """Indices of near-identical items of one origin: each joins the first group whose first item it resembles in words;
    then groups with any pair alike in meaning (`alike` holds the pair of ids) are one."""
    sets = [shingles(item.text) for item in items]
    groups: list[list[int]] = []
    for i, item in enumerate(items):
        home = next(
            (g for g in groups if items[g[0]].origin == item.origin and similarity(sets[g[0]], sets[i]) >= SIMILARITY),
            None,
        )
        if home is None:
            groups.append([i])
        else:
            home.append(i)

    def linked(a, b):
        return items[a[0]].origin == items[b[0]].origin and any(
            frozenset((items[i].id, items[j].id)) in alike for i in a for j in b
        )

    merged: list[list[int]] = []
    for group in groups:
        joined = [m for m in merged if linked(m, group)]
        for m in joined:
            merged.remove(m)
        merged.append(sorted(group + [i for m in joined for i in m]))
    return sorted(merged)


def _windows(group: list[int], items: Sequence[Item]) -> list[list[int]]:
    """The parts of a group that lie within WINDOW of each other. A group with an undated item is one window: a time
    nobody knows cannot prove the copies were spread out."""
    if any(items[i].at is None for i in group):
        return [group]
    ordered = sorted(group, key=lambda i: (_utc(items[i].at), i))
    windows, start = [], 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and _utc(items[ordered[end + 1]].at) - _utc(items[ordered[start]].at) <= WINDOW:
            end += 1
        if end - start + 1 >= MIN_BURST:
            windows.append(sorted(ordered[start : end + 1]))
            start = end + 1
        else:
            start += 1
    return windows


def _span_words(times: list[datetime]) -> str:
    span = max(times) - min(times)
    minutes = max(1, math.ceil(span.total_seconds() / 60))
    if minutes < 60:
        return f"within {minutes} minute{'s' if minutes > 1 else ''}"
    hours = math.ceil(minutes / 60)
    return f"within {hours} hour{'s' if hours > 1 else ''}"


def _origin_words(origin: str) -> str:
    name = origin.strip().strip(":")
    return "unknown origin" if name in ("", "unknown") else f"origin {name}"


def bursts(items: Sequence[Item], alike: Collection[frozenset[str]] = frozenset()) -> list[Burst]:
    """Every burst among `items`: MIN_BURST or more near-identical records of one origin, within WINDOW of each other
    where all have a time; in the order of their first record. `alike`: pairs of ids the bank finds the same in meaning."""
    found = []
    for group in _groups(items, alike):
        for members in _windows(group, items):
            if len(members) < MIN_BURST:
                continue
            dated = [_utc(items[i].at) for i in members if items[i].at is not None]
            when = _span_words(dated) if len(dated) == len(members) else "(times not known)"
            origin = items[members[0]].origin
            found.append(
                (
                    members[0],
                    Burst(
                        ids=tuple(items[i].id for i in members),
                        origin=origin,
                        summary=f"{len(members)} near-identical records from {_origin_words(origin)} {when}",
                    ),
                )
            )
    return [burst for _, burst in sorted(found, key=lambda pair: pair[0])]

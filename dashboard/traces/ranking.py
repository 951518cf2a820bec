"""Ranking figures of one returned list against the documents known to be relevant. Plain Python.

precision@k: relevant documents among the top k returned, over the documents in the top k (fewer than k when
fewer were returned); reciprocal rank: 1 / the rank of the first relevant document (0 when none is returned);
hit: a relevant document is in the top k. Documents nobody labelled count as not relevant.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class RankFigures:
    precision: float
    reciprocal_rank: float
    hit: bool
    top_k: int  # documents in the top k


def distinct(document_ids: Iterable[str | None]) -> list[str]:
    """Document ids in first-seen order (a document with several facts counts once, at its best rank)."""
    return list(dict.fromkeys(d for d in document_ids if d))


def rank_figures(ranked: list[str], relevant: set[str], k: int) -> RankFigures:
    top = ranked[:k]
    first = next((i for i, d in enumerate(ranked, 1) if d in relevant), None)
    found = sum(1 for d in top if d in relevant)
    return RankFigures(found / len(top) if top else 0.0, 1 / first if first else 0.0, found > 0, len(top))

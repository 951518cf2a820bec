"""What-if fusion replay on a recall trace's retrieval lists. Plain Python, no Streamlit.

How Hindsight 1.1.0 fuses (read from its source, re-implemented here):

1. The trace holds one retrieval list per (method, fact type), each ranked 1..n within that fact type.
   Per method, the server concatenates the fact types' lists in the order the fact types were asked
   for (the order they appear in the trace) and sorts the result by the arm's score, best first, with
   a STABLE sort, so ties keep that concatenation order. A result's position in that merged list is
   its rank for the source (`rrf_merged[].source_ranks`).
2. Reciprocal rank fusion over the sources in the order semantic, bm25, graph, temporal:
   score = sum of 1/(k + rank), added in that order from 0.0 (k = 60). Candidates are ordered by
   score, best first, stable on the order they were first seen across those lists.
3. When the merged pool is larger than the reranker's candidate cap (300 by default), only the top
   `cap` by RRF score reach the reranker: the rest are "pre-filtered" (not in the trace; derived).

The replay reproduces that exactly with default settings and lets a reviewer try what the server
does not (or does only globally): per-source caps and weights, score gates, another k.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dashboard.hindsight.wire import SOURCES, RecallTrace, RetrievalHit

DEFAULT_RRF_K = 60
DEFAULT_RERANKER_MAX_CANDIDATES = 300


class ReplaySettings(BaseModel):
    """Knobs of a what-if replay. The defaults are the server's (a replay with them is the trace)."""

    model_config = ConfigDict(extra="forbid")

    rrf_k: int = Field(default=DEFAULT_RRF_K, ge=1, le=10_000)
    caps: dict[str, int] = Field(default_factory=dict)  # source -> keep its top n; 0 or absent = no cap
    weights: dict[str, float] = Field(default_factory=dict)  # source -> weight; absent = 1.0, 0 = arm off
    min_semantic: float | None = None  # keep semantic hits with similarity >= this
    min_bm25: float | None = None  # keep BM25 hits with score >= this
    reranker_max_candidates: int | None = Field(default=DEFAULT_RERANKER_MAX_CANDIDATES, ge=1)  # None = no cap
    top_k: int = Field(default=10, ge=1, le=1000)

    @field_validator("caps", "weights")
    @classmethod
    def _known_sources(cls, value: dict) -> dict:
        unknown = set(value) - set(SOURCES)
        if unknown:
            raise ValueError(f"unknown source(s) {sorted(unknown)}; expected some of {list(SOURCES)}")
        if any(v < 0 for v in value.values()):
            raise ValueError("caps and weights must not be negative")
        return value

    def weight(self, source: str) -> float:
        return float(self.weights.get(source, 1.0))

    def cap(self, source: str) -> int:
        return int(self.caps.get(source, 0) or 0)


@dataclass(frozen=True)
class SourceHit:
    node_id: str
    text: str
    score: float | None
    fact_type: str | None


@dataclass
class FusedCandidate:
    node_id: str
    text: str
    rrf_score: float
    source_ranks: dict[str, int]  # source -> rank in that source's merged list
    contributions: dict[str, float]  # source -> weighted 1/(k+rank)
    rrf_rank: int = 0


@dataclass
class ReplayResult:
    settings: ReplaySettings
    source_lists: dict[str, list[SourceHit]]  # after gates and caps, the lists that were fused
    source_sizes_before: dict[str, int]  # before gates and caps
    merged: list[FusedCandidate]  # every fused candidate, best first
    kept: list[FusedCandidate] = field(default_factory=list)  # those that reach the reranker
    pre_filtered: list[FusedCandidate] = field(default_factory=list)

    @property
    def top(self) -> list[FusedCandidate]:
        return self.kept[: self.settings.top_k]


def _passes_gate(source: str, hit: RetrievalHit, settings: ReplaySettings) -> bool:
    if source == "semantic" and settings.min_semantic is not None:
        return hit.score is not None and hit.score >= settings.min_semantic
    if source == "bm25" and settings.min_bm25 is not None:
        return hit.score is not None and hit.score >= settings.min_bm25
    return True


def source_lists(
    trace: RecallTrace, settings: ReplaySettings | None = None
) -> tuple[dict[str, list[SourceHit]], dict[str, int]]:
    """Per source, the fact types' lists merged into one ranked list (then gated and capped)."""
    settings = settings or ReplaySettings()
    raw: dict[str, list[tuple[RetrievalHit, str | None]]] = {}
    for retrieval in trace.retrieval_results:  # trace order = the fact-type order the server merged in
        hits = raw.setdefault(retrieval.method_name, [])
        hits.extend((hit, retrieval.fact_type) for hit in sorted(retrieval.results, key=lambda h: h.rank))
    sizes_before: dict[str, int] = {}
    lists: dict[str, list[SourceHit]] = {}
    for source, hits in raw.items():
        sizes_before[source] = len(hits)
        # sorted() is stable: equal scores keep the concatenation order, as on the server.
        ordered = sorted(hits, key=lambda pair: pair[0].score or 0.0, reverse=True)
        gated = [SourceHit(h.node_id, h.text, h.score, ft) for h, ft in ordered if _passes_gate(source, h, settings)]
        cap = settings.cap(source)
        lists[source] = gated[:cap] if cap > 0 else gated
    return lists, sizes_before


def _source_order(names) -> list[str]:
    known = [s for s in SOURCES if s in names]
    return known + sorted(n for n in names if n not in SOURCES)


def fuse(lists: dict[str, list[SourceHit]], settings: ReplaySettings | None = None) -> list[FusedCandidate]:
    """(Weighted) reciprocal rank fusion, ordered and tie-broken as the server does."""
    settings = settings or ReplaySettings()
    candidates: dict[str, FusedCandidate] = {}  # insertion order = first seen
    for source in _source_order(lists):
        weight = settings.weight(source)
        if weight == 0:
            continue  # a weight of 0 switches the arm off
        for rank, hit in enumerate(lists[source], start=1):
            cand = candidates.get(hit.node_id)
            if cand is None:
                cand = candidates[hit.node_id] = FusedCandidate(hit.node_id, hit.text, 0.0, {}, {})
            contribution = weight * (1.0 / (settings.rrf_k + rank))  # weight 1.0 leaves it bit-exact
            cand.rrf_score += contribution
            cand.source_ranks[source] = rank
            cand.contributions[source] = cand.contributions.get(source, 0.0) + contribution
    merged = sorted(candidates.values(), key=lambda c: c.rrf_score, reverse=True)
    for rank, cand in enumerate(merged, start=1):
        cand.rrf_rank = rank
    return merged


def replay(trace: RecallTrace, settings: ReplaySettings | None = None) -> ReplayResult:
    settings = settings or ReplaySettings()
    lists, sizes_before = source_lists(trace, settings)
    merged = fuse(lists, settings)
    cap = settings.reranker_max_candidates
    kept, dropped = (merged[:cap], merged[cap:]) if cap is not None and len(merged) > cap else (merged, [])
    return ReplayResult(settings, lists, sizes_before, merged, kept, dropped)


# -- comparing with the server ---------------------------------------------------------------------


@dataclass(frozen=True)
class TopKDiff:
    k: int
    server: list[str]  # node ids, the server's top k by RRF (trace.rrf_merged)
    replay: list[str]
    entered: list[str]  # in the replay's top k, not in the server's
    left: list[str]  # in the server's top k, not in the replay's

    @property
    def changed(self) -> bool:
        return self.server != self.replay


def server_top(trace: RecallTrace, k: int) -> list[str]:
    """The server's top k by fusion: its rrf_merged order (the reranker saw these first)."""
    return [c.node_id for c in sorted(trace.rrf_merged, key=lambda c: c.final_rrf_rank)[:k]]


def diff_top_k(trace: RecallTrace, result: ReplayResult) -> TopKDiff:
    k = result.settings.top_k
    server = server_top(trace, k)
    mine = [c.node_id for c in result.top]
    return TopKDiff(
        k=k,
        server=server,
        replay=mine,
        entered=[n for n in mine if n not in server],
        left=[n for n in server if n not in mine],
    )


def source_shares(candidates: list[FusedCandidate]) -> dict[str, dict[str, float]]:
    """Per source: how many of these candidates it found, and its share of their summed RRF score."""
    total = sum(c.rrf_score for c in candidates)
    names = _source_order({s for c in candidates for s in c.source_ranks} | set(SOURCES))
    shares: dict[str, dict[str, float]] = {}
    for source in names:
        found = sum(1 for c in candidates if source in c.source_ranks)
        score = sum(c.contributions.get(source, 0.0) for c in candidates)
        shares[source] = {"found": found, "score_share": (score / total) if total else 0.0}
    return shares


def server_candidates(trace: RecallTrace, k: int = DEFAULT_RRF_K) -> list[FusedCandidate]:
    """The trace's rrf_merged as FusedCandidates (contributions recomputed with RRF's k)."""
    out = []
    for c in sorted(trace.rrf_merged, key=lambda c: c.final_rrf_rank):
        ranks = c.source_ranks.as_dict()
        out.append(
            FusedCandidate(
                c.node_id, c.text, c.rrf_score, ranks, {s: 1.0 / (k + r) for s, r in ranks.items()}, c.final_rrf_rank
            )
        )
    return out

"""What the agent gets back: Hindsight's scoring AFTER fusion, on top of a what-if replay. Plain Python.

The RRF order (`replay.py`) is not the returned order. Hindsight 1.1.0 then (read from its source,
re-implemented here):

1. Reranker cut: when the fused pool is larger than the reranker's candidate cap, candidates are
   sorted by RRF score (with `HINDSIGHT_API_RECALL_STRATEGY_BOOSTS`, a boosted arm's rank r counts as
   r / divisor: low 2, medium 4, high 8) and only the top `cap` go on. Under the cap nothing moves.
2. Reranker. The embedded server's reranker is the RRF passthrough: every candidate scores the same,
   so a base score is seeded from the RRF rank among the kept ones: 1 - 0.9 * i / (n - 1) (i from 0).
   A real cross-encoder's scores cannot be predicted: they are read from the trace when there.
3. Combined score = base * recency boost * temporal boost * proof-count boost, each 1 + alpha * (x - 0.5):
   recency (alpha 0.2) from the memory's age against the query's time (linear: 1 - days/365, floor
   0.1); temporal proximity (alpha 0.2) to the middle of the window a dated query names, but only
   when the candidate's FIRST arm in fusion order (semantic, bm25, graph, temporal) is the temporal
   one (the server keeps the first arm's copy of the memory, and only the temporal arm's copy carries
   a proximity); proof count (alpha 0.1) for observations. Then a stable sort, best first.
4. Strategy boosts add a rank-decaying bump after a real cross-encoder (never after the passthrough).
5. The list is cut to twice the budget's thinking budget, then to `max_tokens` (a fact that does not
   fit is skipped, the next one may still fit).

Inputs come from the trace: its query time, temporal window, budget and max_tokens, each candidate's
recency, temporal and proof components (trace.reranked) and dates (retrieval hits). A candidate the
trace never scored (cut before the reranker in the trace) is scored from its date: exact on data
retained with a timestamp, an estimate when the server extracted date ranges; it is marked
`from_trace=False`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dashboard.hindsight.wire import SOURCES, RecallResponse, RecallTrace
from dashboard.traces.replay import FusedCandidate, ReplayResult, ReplaySettings, replay

RECENCY_ALPHA = TEMPORAL_ALPHA = 0.2
PROOF_COUNT_ALPHA = 0.1
NEUTRAL = 0.5
EMPTY: dict = {}
BOOST_LEVELS = {"low": (2.0, 0.05), "medium": (4.0, 0.2), "high": (8.0, 0.5)}  # rank divisor, additive bump
BUDGET_THINKING = {"low": 100, "mid": 300, "high": 1000}
DEFAULT_ENCODING = "o200k_base"


class ScoringSettings(BaseModel):
    """The server's post-fusion settings (defaults: the embedded server's)."""

    model_config = ConfigDict(extra="forbid")

    passthrough_reranker: bool = True  # HINDSIGHT_API_RERANKER_PROVIDER=rrf
    strategy_boosts: dict[str, Literal["low", "medium", "high"]] = Field(default_factory=dict)
    recency_decay: Literal["linear", "exponential", "none"] = "linear"
    linear_window_days: float = Field(default=365.0, gt=0)
    halflife_days: float = Field(default=90.0, gt=0)

    @field_validator("strategy_boosts")
    @classmethod
    def _known_arms(cls, value: dict) -> dict:
        unknown = set(value) - set(SOURCES)
        if unknown:
            raise ValueError(f"unknown arm(s) {sorted(unknown)} in strategy_boosts; expected some of {list(SOURCES)}")
        return value

    @property
    def server_recency(self) -> bool:
        return (self.recency_decay, self.linear_window_days, self.halflife_days) == ("linear", 365.0, 90.0)


@dataclass(slots=True)
class ScoredCandidate:
    node_id: str
    text: str
    rrf_score: float
    rrf_rank: int
    source_ranks: dict[str, int]
    base: float  # the reranker's normalised score (seeded from the RRF rank by the passthrough)
    recency: float
    temporal: float
    proof_norm: float
    score: float = 0.0
    rank: int = 0
    from_trace: bool = True  # recency and temporal came from the trace's own scoring (False: from the date)


@dataclass
class Prediction:
    replay: ReplayResult
    scoring: ScoringSettings
    kept: list[FusedCandidate]  # reached the reranker
    scored: list[ScoredCandidate]  # every kept candidate, in final order
    returned: list[ScoredCandidate]  # after the thinking-budget and max_tokens cuts

    @property
    def top(self) -> list[ScoredCandidate]:
        return self.returned[: self.replay.settings.top_k]

    def top_ids(self, k: int | None = None) -> list[str]:
        return [c.node_id for c in self.returned[: k or self.replay.settings.top_k]]

    @property
    def from_trace(self) -> bool:
        return all(c.from_trace for c in self.scored)


# -- inputs read from the trace ---------------------------------------------------------------------


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value)  # Python 3.11 reads a trailing Z
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def recency_signal(days_ago: float, settings: ScoringSettings) -> float:
    if settings.recency_decay == "none":
        return NEUTRAL
    if settings.recency_decay == "exponential":
        return 1.0 if days_ago <= 0 else 0.5 ** (days_ago / settings.halflife_days)
    return max(0.1, min(1.0, 1.0 - days_ago / settings.linear_window_days))


def proximity(date: datetime | None, window: tuple[datetime, datetime]) -> float:
    """Closeness of a date to the middle of the query's window: 1 at the middle, 0 at the edges or beyond."""
    if date is None:
        return NEUTRAL
    start, end = window
    total_days = (end - start).total_seconds() / 86400
    if total_days <= 0:
        return 1.0
    middle = start + (end - start) / 2
    return 1.0 - min(abs((date - middle).total_seconds() / 86400) / (total_days / 2), 1.0)


@dataclass
class TraceFacts:
    """What the trace says about the query and each candidate; dates are parsed when first needed."""

    now: datetime
    window: tuple[datetime, datetime] | None
    thinking_budget: int
    max_tokens: int | None
    event_dates: dict[str, str | None]
    components: dict[str, dict[str, float | None]]  # node id -> the trace's score components
    first_source: dict[str, str]  # node id -> its first arm in the trace's fusion (only for dated queries)
    _parsed: dict[str, datetime | None] = field(default_factory=dict)

    def date(self, node_id: str) -> datetime | None:
        if node_id not in self._parsed:
            self._parsed[node_id] = parse_time(self.event_dates.get(node_id))
        return self._parsed[node_id]


def trace_facts(trace: RecallTrace) -> TraceFacts:
    query = trace.query
    now = parse_time(query.timestamp) or datetime.now(UTC)
    window = None
    if query.temporal_constraint:
        start = parse_time(query.temporal_constraint.get("start"))
        end = parse_time(query.temporal_constraint.get("end"))
        window = (start, end) if start and end else None
    budget = query.budget
    thinking = budget if isinstance(budget, int) else BUDGET_THINKING.get(str(budget), BUDGET_THINKING["mid"])
    dates: dict[str, str | None] = {}
    for retrieval in trace.retrieval_results:
        for hit in retrieval.results:
            if dates.get(hit.node_id) is None:
                dates[hit.node_id] = hit.event_date
    first = {}
    if window is not None:  # proximity only counts on a dated query
        for cand in trace.rrf_merged:
            ranks = cand.source_ranks
            first[cand.node_id] = next((s for s in SOURCES if getattr(ranks, f"{s}_rank") is not None), "")
    return TraceFacts(
        now=now,
        window=window,
        thinking_budget=thinking,
        max_tokens=query.max_tokens,
        event_dates=dates,
        components={r.node_id: r.score_components for r in trace.reranked},
        first_source=first,
    )


# -- the stages -------------------------------------------------------------------------------------


def boosted_rrf_score(cand: FusedCandidate, boosts: dict[str, str], rrf_k: int) -> float:
    """RRF score with each boosted arm's rank divided by its level's divisor (the server's pre-rerank boost)."""
    delta = 0.0
    for arm, level in boosts.items():
        rank = cand.source_ranks.get(arm)
        if rank is not None:
            divisor = BOOST_LEVELS[level][0]
            delta += 1.0 / (rrf_k + rank / divisor) - 1.0 / (rrf_k + rank)
    return cand.rrf_score + delta


def reranker_cut(result: ReplayResult, scoring: ScoringSettings) -> list[FusedCandidate]:
    """The candidates that reach the reranker, in the order the reranker is handed them."""
    cap = result.settings.reranker_max_candidates
    merged = list(result.merged)
    if cap is None or len(merged) <= cap:
        return merged
    if scoring.strategy_boosts:
        merged.sort(key=lambda c: boosted_rrf_score(c, scoring.strategy_boosts, result.settings.rrf_k), reverse=True)
    return merged[:cap]


def _first_source(cand: FusedCandidate) -> str:
    for source in SOURCES:
        if source in cand.source_ranks:
            return source
    return ""


def _score_one(cand: FusedCandidate, base: float, facts: TraceFacts, scoring: ScoringSettings) -> ScoredCandidate:
    comp = facts.components.get(cand.node_id, EMPTY)
    from_trace = True
    if scoring.server_recency and comp.get("recency") is not None:
        recency = float(comp["recency"])
    else:
        date = facts.date(cand.node_id)
        recency = NEUTRAL if date is None else recency_signal((facts.now - date).total_seconds() / 86400, scoring)
        from_trace = False
    if facts.window is None or _first_source(cand) != "temporal":
        temporal = NEUTRAL
    elif facts.first_source.get(cand.node_id) == "temporal" and comp.get("temporal") is not None:
        temporal = float(comp["temporal"])
    else:
        temporal = proximity(facts.date(cand.node_id), facts.window)
        from_trace = False
    proof_norm = float(comp.get("proof_norm") or NEUTRAL)
    # positional: this runs once per candidate, thousands of times per prediction
    return ScoredCandidate(
        cand.node_id,
        cand.text,
        cand.rrf_score,
        cand.rrf_rank,
        cand.source_ranks,
        base,
        recency,
        temporal,
        proof_norm,
        0.0,
        0,
        from_trace,
    )


def combined(c: ScoredCandidate) -> float:
    return (
        c.base
        * (1.0 + RECENCY_ALPHA * (c.recency - NEUTRAL))
        * (1.0 + TEMPORAL_ALPHA * (c.temporal - NEUTRAL))
        * (1.0 + PROOF_COUNT_ALPHA * (c.proof_norm - NEUTRAL))
    )


def additive_boost(source_ranks: dict[str, int], boosts: dict[str, str]) -> float:
    bump = 0.0
    for arm, level in boosts.items():
        rank = source_ranks.get(arm)
        if rank is None:
            continue
        divisor, additive = BOOST_LEVELS[level]
        bump += additive if arm == "temporal" else additive * divisor / (divisor + rank - 1)
    return bump


def score(kept: list[FusedCandidate], facts: TraceFacts, scoring: ScoringSettings) -> list[ScoredCandidate]:
    """Combined scoring of the candidates that reached the reranker, best first (stable on the kept order)."""
    if scoring.passthrough_reranker:
        by_rrf = sorted(kept, key=lambda c: c.rrf_score, reverse=True)
        denom = max(1, len(kept) - 1)
        base = {c.node_id: 1.0 - 0.9 * i / denom for i, c in enumerate(by_rrf)}
        scored = [_score_one(c, base[c.node_id], facts, scoring) for c in kept]
    else:
        scored = []
        for c in kept:
            ce = facts.components.get(c.node_id, {}).get("cross_encoder_score_normalized")
            one = _score_one(c, float(ce or 0.0), facts, scoring)
            one.from_trace = one.from_trace and ce is not None
            scored.append(one)
        scored.sort(key=lambda s: s.base, reverse=True)  # the cross-encoder's own sort comes first
    for s in scored:
        s.score = combined(s)
        if scoring.strategy_boosts and not scoring.passthrough_reranker:
            s.score += additive_boost(s.source_ranks, scoring.strategy_boosts)
    scored.sort(key=lambda s: s.score, reverse=True)
    for rank, s in enumerate(scored, start=1):
        s.rank = rank
    return scored


def _token_counter() -> Callable[[list[str]], list[int]]:
    """The server's token counter when its tokenizer is installed (the embedded extra), else ~4 chars a token."""
    try:
        import toktok
    except ImportError:
        return lambda texts: [max(1, math.ceil(len(t) / 4)) for t in texts]
    return lambda texts: toktok.batch_count(texts, DEFAULT_ENCODING, threads=1)


def within_budget(scored: list[ScoredCandidate], thinking_budget: int, max_tokens: int | None) -> list[ScoredCandidate]:
    head = scored[: thinking_budget * 2]
    if max_tokens is None or not head:
        return head
    if max_tokens <= 0:
        return []
    counts = _token_counter()([c.text for c in head])
    picked, used = [], 0
    for cand, tokens in zip(head, counts, strict=True):
        if used + tokens > max_tokens:
            continue  # skipped; a shorter fact further down may still fit
        used += tokens
        picked.append(cand)
    return picked or head[:1]


def predict(
    trace: RecallTrace,
    settings: ReplaySettings | None = None,
    scoring: ScoringSettings | None = None,
    facts: TraceFacts | None = None,
) -> Prediction:
    """The returned order under a what-if: replay the fusion, cut for the reranker, score, cut to budget.
    `facts` (trace_facts(trace)) can be passed in when one trace is predicted under many settings."""
    scoring = scoring or ScoringSettings()
    result = replay(trace, settings)
    facts = facts or trace_facts(trace)
    kept = reranker_cut(result, scoring)
    scored = score(kept, facts, scoring)
    return Prediction(result, scoring, kept, scored, within_budget(scored, facts.thinking_budget, facts.max_tokens))


def returned_ids(response: RecallResponse, k: int | None = None) -> list[str]:
    ids = [m.id for m in response.results]
    return ids[:k] if k else ids


def server_knobs(per_source_cap: int = 0, reranker_max_candidates: int = 300, top_k: int = 10) -> ReplaySettings:
    """A what-if equal to a server started with HINDSIGHT_API_RECALL_MAX_CANDIDATES_PER_SOURCE and
    HINDSIGHT_API_RERANKER_MAX_CANDIDATES (the server caps every arm alike)."""
    caps = {s: per_source_cap for s in SOURCES} if per_source_cap > 0 else {}
    return ReplaySettings(caps=caps, reranker_max_candidates=reranker_max_candidates, top_k=top_k)

"""Reading a recall trace: which arm put each memory where it is. Plain Python, no Streamlit.

Works on the pydantic models of `dashboard.hindsight.wire` (a `RecallResponse` with its trace).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from dashboard.hindsight.wire import SOURCES, RecallResponse, RecallTrace
from dashboard.traces.replay import DEFAULT_RRF_K


class ResultRow(BaseModel):
    """One fused candidate: its rank in each arm, each arm's RRF contribution, and what became of it."""

    node_id: str
    text: str
    fact_type: str | None = None
    arm_ranks: dict[str, int] = Field(default_factory=dict)  # source -> rank in the source's merged list
    fact_type_ranks: dict[str, int] = Field(default_factory=dict)  # source -> rank within its fact type's list
    contributions: dict[str, float] = Field(default_factory=dict)  # source -> 1/(k + rank)
    rrf_score: float
    rrf_rank: int
    reranked_rank: int | None = None  # None: pre-filtered (never reached the reranker)
    rank_change: int | None = None  # rrf rank - reranked rank: positive moved up
    returned: bool = False  # in the response's results
    single_arm: bool = False  # only one arm found it

    @property
    def pre_filtered(self) -> bool:
        return self.reranked_rank is None


class CandidateCount(BaseModel):
    source: str
    fact_type: str | None
    count: int


class Phase(BaseModel):
    name: str
    seconds: float
    diagnostic: bool = False  # a sub-phase of another one (not to be summed)
    details: dict = Field(default_factory=dict)


class TraceAnalysis(BaseModel):
    query: str
    rows: list[ResultRow]
    counts: list[CandidateCount]
    pre_filtered: int  # candidates fused but cut before the reranker (derived: not in the trace)
    results_returned: int
    phases: list[Phase]
    total_seconds: float | None = None
    temporal_ran: bool = False

    def counts_by_source(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for c in self.counts:
            totals[c.source] = totals.get(c.source, 0) + c.count
        return totals


def candidate_counts(trace: RecallTrace) -> list[CandidateCount]:
    return [
        CandidateCount(source=r.method_name, fact_type=r.fact_type, count=len(r.results))
        for r in trace.retrieval_results
    ]


def pre_filtered_count(trace: RecallTrace) -> int:
    """Fused candidates that never reached the reranker: rrf_merged holds every fused candidate,
    reranked holds those the reranker scored (the server keeps the top N by RRF score)."""
    reranked = {r.node_id for r in trace.reranked}
    return sum(1 for c in trace.rrf_merged if c.node_id not in reranked)


def phases(trace: RecallTrace) -> list[Phase]:
    return [
        Phase(
            name=p.phase_name,
            seconds=p.duration_seconds,
            diagnostic=bool(p.details.get("diagnostic")),
            details=p.details,
        )
        for p in trace.summary.phase_metrics
    ]


def analyse(response: RecallResponse, k: int = DEFAULT_RRF_K) -> TraceAnalysis:
    trace = response.trace
    if trace is None:
        raise ValueError("this recall has no trace: make it again with trace=True")
    fact_type: dict[str, str | None] = {}
    ft_ranks: dict[str, dict[str, int]] = {}
    for retrieval in trace.retrieval_results:
        for hit in retrieval.results:
            fact_type.setdefault(hit.node_id, retrieval.fact_type)
            ft_ranks.setdefault(hit.node_id, {})[retrieval.method_name] = hit.rank
    reranked = {r.node_id: r for r in trace.reranked}
    returned = {m.id for m in response.results}
    rows = []
    for cand in sorted(trace.rrf_merged, key=lambda c: c.final_rrf_rank):
        ranks = cand.source_ranks.as_dict()
        rr = reranked.get(cand.node_id)
        rows.append(
            ResultRow(
                node_id=cand.node_id,
                text=cand.text,
                fact_type=fact_type.get(cand.node_id),
                arm_ranks=ranks,
                fact_type_ranks=ft_ranks.get(cand.node_id, {}),
                contributions={s: 1.0 / (k + r) for s, r in ranks.items()},
                rrf_score=cand.rrf_score,
                rrf_rank=cand.final_rrf_rank,
                reranked_rank=rr.rerank_rank if rr else None,
                rank_change=rr.rank_change if rr else None,
                returned=cand.node_id in returned,
                single_arm=len(ranks) == 1,
            )
        )
    return TraceAnalysis(
        query=trace.query.query_text,
        rows=rows,
        counts=candidate_counts(trace),
        pre_filtered=pre_filtered_count(trace),
        results_returned=len(response.results),
        phases=phases(trace),
        total_seconds=trace.summary.total_duration_seconds,
        temporal_ran=any(r.method_name == "temporal" for r in trace.retrieval_results),
    )


def rows_table(analysis: TraceAnalysis) -> list[dict]:
    """Flat rows for a table: one per candidate, a rank and contribution column per source."""
    table = []
    for r in analysis.rows:
        row: dict = {
            "rrf_rank": r.rrf_rank,
            "reranked_rank": r.reranked_rank,
            "change": r.rank_change,
            "returned": r.returned,
            "single_arm": r.single_arm,
            "rrf_score": r.rrf_score,
        }
        for s in SOURCES:
            row[f"{s}_rank"] = r.arm_ranks.get(s)
        for s in SOURCES:
            row[f"{s}_rrf"] = r.contributions.get(s)
        row.update({"fact_type": r.fact_type, "text": r.text, "node_id": r.node_id})
        table.append(row)
    return table

"""Labelled evidence sets: does the expected evidence reach the returned top k, which arm brings it,
and which fusion setting would bring it more often. Plain Python, no Streamlit.

A set is JSON Lines, one case a line:
`{"query": "...", "tags": [...], "tags_match": "any", "expected_document_ids": ["..."]}`
(tags and tags_match optional). Each case is recalled once with `trace=True`; everything else (per-arm
figures, the grid of what-if settings) is computed from those traces, the grid with `scoring.predict`,
so it predicts the RETURNED top k, not the RRF order.
"""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field, ValidationError

from dashboard.hindsight.wire import SOURCES, RecallResponse, TagsMatch
from dashboard.strict import StrictModel
from dashboard.traces.ranking import distinct, rank_figures
from dashboard.traces.replay import ReplaySettings
from dashboard.traces.scoring import Prediction, predict, trace_facts

GRID_WEIGHTS = (0.0, 0.5, 1.0)
GRID_CAPS = (10, 20, 50, None)
MEMORY_PAGE = 1000


class EvidenceCase(StrictModel):
    query: str = Field(min_length=1, max_length=4000)
    tags: list[str] = Field(default_factory=list)
    tags_match: TagsMatch = "any"
    expected_document_ids: list[str] = Field(min_length=1)


class EvidenceSetError(ValueError):
    """A labelled set that cannot be read; the message names the file and line."""


def parse_cases(lines: Iterable[str], source: str = "<set>") -> list[EvidenceCase]:
    cases = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            cases.append(EvidenceCase.model_validate(json.loads(line)))
        except json.JSONDecodeError as exc:
            raise EvidenceSetError(f"{source} line {number}: not JSON ({exc.msg})") from None
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "case"
            raise EvidenceSetError(f"{source} line {number}: {where}: {err['msg']}") from None
    if not cases:
        raise EvidenceSetError(f"{source}: no cases")
    return cases


def load_cases(path: Path | str) -> list[EvidenceCase]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceSetError(f"{path}: cannot read ({exc})") from None
    return parse_cases(text.splitlines(), str(path))


def dump_cases(cases: Iterable[EvidenceCase]) -> str:
    return "".join(json.dumps(c.model_dump(exclude_defaults=True), sort_keys=True) + "\n" for c in cases)


# -- running a set ----------------------------------------------------------------------------------


@dataclass
class CaseRun:
    case: EvidenceCase
    response: RecallResponse | None
    error: str | None = None
    predictions: dict[str, Prediction] = field(default_factory=dict)


def document_map(gateway, bank: str) -> dict[str, str]:
    """Memory id -> document id for the whole bank (the trace names memories, the labels documents)."""
    mapping: dict[str, str] = {}
    offset = 0
    while True:
        page = gateway.list_memories(bank, limit=MEMORY_PAGE, offset=offset)
        items = page.get("items") or []
        mapping.update({m["id"]: m.get("document_id") or "" for m in items})
        offset += len(items)
        if not items or offset >= int(page.get("total") or 0):
            return mapping


def run_cases(
    gateway, bank: str, cases: list[EvidenceCase], progress: Callable[[int, int], None] | None = None
) -> list[CaseRun]:
    """One traced recall per case (concurrently, on the gateway's loop); a failed case keeps its error."""
    jobs = [
        (lambda c=c: gateway.arecall(bank, c.query, tags=c.tags or None, tags_match=c.tags_match, trace=True))
        for c in cases
    ]
    results = gateway.recall_many(jobs, progress=progress)
    return [
        CaseRun(c, None, f"{type(r).__name__}: {r}") if isinstance(r, BaseException) else CaseRun(c, r)
        for c, r in zip(cases, results, strict=True)
    ]


# -- figures ----------------------------------------------------------------------------------------


def _expected_nodes(run: CaseRun, docs: dict[str, str]) -> set[str]:
    wanted = set(run.case.expected_document_ids)
    nodes = {n for n, d in docs.items() if d in wanted}
    nodes |= {m.id for m in run.response.results if m.document_id in wanted}
    return nodes


def case_figures(run: CaseRun, docs: dict[str, str], k: int) -> dict:
    """Per case: did the evidence reach the returned top k, and per arm where it got to."""
    trace = run.response.trace
    expected = _expected_nodes(run, docs)
    top = run.response.results[:k]
    ranks = {c.node_id: c.source_ranks.as_dict() for c in trace.rrf_merged}
    reranked = {r.node_id for r in trace.reranked} or set(ranks)
    arm_lists: dict[str, set[str]] = {}
    for retrieval in trace.retrieval_results:
        arm_lists.setdefault(retrieval.method_name, set()).update(h.node_id for h in retrieval.results)
    arms = {}
    for arm in SOURCES:
        found = {n for n, r in ranks.items() if arm in r}
        arms[arm] = {
            "ran": arm in arm_lists,
            "in_list": bool(expected & arm_lists.get(arm, set())),
            "in_pool": bool(expected & found & reranked),
            "in_top_k": any(m.id in expected and m.id in found for m in top),
            "top_k_slots": sum(1 for m in top if m.id in found),
        }
    ranking = rank_figures(
        distinct(m.document_id for m in run.response.results), set(run.case.expected_document_ids), k
    )
    return {
        "query": run.case.query,
        "evidence": any(m.id in expected for m in top),
        "precision_at_k": ranking.precision,  # over documents (traces.ranking)
        "reciprocal_rank": ranking.reciprocal_rank,
        "returned": len(top),
        "first_evidence_rank": next((i for i, m in enumerate(run.response.results, 1) if m.id in expected), None),
        "arms": arms,
    }


def grid_settings(bm25_gates: Iterable[float | None], k: int) -> list[tuple[dict, ReplaySettings]]:
    rows = []
    for weights in itertools.product(GRID_WEIGHTS, repeat=len(SOURCES)):
        if not any(weights):
            continue
        for cap in GRID_CAPS:
            for gate in bm25_gates:
                label = {
                    "weights": dict(zip(SOURCES, weights, strict=True)),
                    "cap": cap,
                    "min_bm25": gate,
                }
                settings = ReplaySettings(
                    weights={s: w for s, w in zip(SOURCES, weights, strict=True) if w != 1.0},
                    caps={s: cap for s in SOURCES} if cap else {},
                    min_bm25=gate,
                    top_k=k,
                )
                rows.append((label, settings))
    return rows


def bm25_gates(runs: list[CaseRun]) -> list[float | None]:
    """No gate, and gates at the median and upper quartile of the BM25 scores the set's traces saw."""
    scores = sorted(
        h.score
        for run in runs
        for r in run.response.trace.retrieval_results
        if r.method_name == "bm25"
        for h in r.results
        if h.score is not None
    )
    if len(scores) < 4:
        return [None]
    quartiles = statistics.quantiles(scores, n=4)
    return [None, *sorted({round(quartiles[1], 4), round(quartiles[2], 4)})]


def _hits(prediction: Prediction, expected: set[str], k: int) -> bool:
    return any(n in expected for n in prediction.top_ids(k))


def evidence_report(runs: list[CaseRun], docs: dict[str, str], k: int = 10, grid: bool = True) -> dict:
    ok = [r for r in runs if r.response is not None and r.response.trace is not None]
    figures = [case_figures(r, docs, k) for r in ok]
    n = len(figures)
    slots = sum(f["returned"] for f in figures)
    per_arm = {}
    for arm in SOURCES:

        def count(key: str, arm: str = arm) -> int:
            return sum(1 for f in figures if f["arms"][arm][key])

        per_arm[arm] = {
            "ran_in": count("ran"),
            "in_list": count("in_list"),
            "in_pool": count("in_pool"),
            "in_top_k": count("in_top_k"),
            "share_of_top_k": (sum(f["arms"][arm]["top_k_slots"] for f in figures) / slots) if slots else 0.0,
        }
    expected = [_expected_nodes(r, docs) for r in ok]
    default_predicted = sum(
        _hits(predict(r.response.trace, ReplaySettings(top_k=k)), e, k) for r, e in zip(ok, expected, strict=True)
    )
    report = {
        "cases": n,
        "failed": [{"query": r.case.query, "error": r.error} for r in runs if r.response is None],
        "k": k,
        "evidence_at_k": sum(f["evidence"] for f in figures),
        "evidence_rate": (sum(f["evidence"] for f in figures) / n) if n else 0.0,
        "precision_at_k": (sum(f["precision_at_k"] for f in figures) / n) if n else 0.0,
        "mrr": (sum(f["reciprocal_rank"] for f in figures) / n) if n else 0.0,
        "predicted_evidence_at_k_default": default_predicted,
        "per_arm": per_arm,
        "per_case": figures,
    }
    if grid:
        traces = [(r.response.trace, trace_facts(r.response.trace)) for r in ok]
        rows = []
        for label, settings in grid_settings(bm25_gates(ok), k):
            hits = sum(_hits(predict(t, settings, facts=f), e, k) for (t, f), e in zip(traces, expected, strict=True))
            rows.append({**label, "evidence_at_k": hits, "evidence_rate": hits / n if n else 0.0})
        baseline = {"weights": dict.fromkeys(SOURCES, 1.0), "cap": None, "min_bm25": None}

        def distance(row: dict) -> int:  # fewer changes from the server's settings first among equals
            return (
                sum(row["weights"][s] != 1.0 for s in SOURCES)
                + (row["cap"] is not None)
                + (row["min_bm25"] is not None)
            )

        rows.sort(key=lambda r: (-r["evidence_at_k"], distance(r)))
        report["grid"] = rows
        report["grid_baseline"] = next(r for r in rows if {k2: r[k2] for k2 in baseline} == baseline)
    return report


def bench(gateway, bank: str, cases: list[EvidenceCase], k: int = 10, grid: bool = True, progress=None) -> dict:
    runs = run_cases(gateway, bank, cases, progress)
    return evidence_report(runs, document_map(gateway, bank), k, grid)

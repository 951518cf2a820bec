""" "Why not this one?": where in the recall pipeline a named document was lost, and the smallest setting
change that brings it back, as the replay predicts it. Plain Python, no Streamlit.

The pipeline, in Hindsight 1.1.0's order: the tag filter (SQL, before any arm), the four arms, the per-source
cap, RRF fusion, the reranker's candidate limit, scoring after fusion, then the k documents the caller takes
within max_tokens. A DOCUMENT is the unit: in extracting mode it is several facts, and it is returned when any
of its facts is; it went as far as its furthest fact. Everything after the tag filter is judged on one trace
with `scoring.predict` under `knobs`: the server's settings by default, or a server that does not exist
(`server_knobs(per_source_cap=5)`) to ask what such a server would lose. Below k, a document is `outranked`
when fusion put it in the top k and the scoring after it (recency, temporal proximity, proof count) pushed
it out, and `cut_by_k` when it was below k after fusion already (or max_tokens ran out before it).

The fix is found stage by stage: the smallest value of the setting that lost the document (the cap that
keeps its best-ranked fact, the reranker limit that reaches its best fused rank, the k or max_tokens that
takes it in), applied, then judged again, until the replay returns it. A tag filter change needs a new
recall (the trace holds only what passed the filter): `explain` makes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from dashboard.hindsight.wire import SOURCES
from dashboard.traces.replay import ReplaySettings, source_lists
from dashboard.traces.request import TracedRecall, TraceRequest, fetch_trace
from dashboard.traces.scoring import Prediction, ScoredCandidate, predict, server_knobs, trace_facts, within_budget

Stage = Literal["tag_filter", "no_arm", "source_cap", "reranker_cut", "outranked", "cut_by_k", "returned"]
STAGES: tuple[Stage, ...] = Stage.__args__
# Each looser mode admits everything the stricter one does (with request tags); tried in this order.
LOOSER_TAGS_MATCH = {
    "exact": ("all_strict", "any_strict", "all", "any"),
    "all_strict": ("any_strict", "all", "any"),
    "all": ("any",),
    "any_strict": ("any",),
    "any": (),
}
MEMORY_PAGE = 100
SEARCH_LIMIT = 20
MAX_TOKENS_LIMIT = 1 << 20  # the max_tokens search stops here: beyond it the budget's candidate cut is what binds


def tags_admit(document_tags: tuple[str, ...], request_tags: tuple[str, ...], tags_match: str) -> bool:
    """The server's tag filter (1.1.0 SQL): no request tags is no filter; `any`/`all` admit untagged memories,
    the `_strict` modes do not; `exact` wants the same set."""
    if not request_tags:
        return True
    mine, wanted = set(document_tags), set(request_tags)
    if tags_match == "exact":
        return mine == wanted
    matched = bool(mine & wanted) if tags_match.startswith("any") else wanted <= mine
    return matched if tags_match.endswith("_strict") else matched or not mine


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class Document(BaseModel):
    """The document a reviewer names: its id, its tags, and the ids of its memory units (facts)."""

    model_config = ConfigDict(frozen=True)

    id: str
    tags: tuple[str, ...] = ()
    memory_ids: frozenset[str]


class Change(BaseModel):
    """One setting changed: of this recall's request (tags_match, k, max_tokens) or of the server (cap, reranker)."""

    model_config = ConfigDict(frozen=True)

    setting: Literal["tags_match", "tags", "per_source_cap", "reranker_max_candidates", "k", "max_tokens"]
    value: str | int | None = None

    @property
    def server_wide(self) -> bool:
        """A server setting alters every recall; the others alter only this request."""
        return self.setting in ("per_source_cap", "reranker_max_candidates")

    def describe(self) -> str:
        return {
            "tags_match": f"tags_match {self.value}",
            "tags": "no tag filter",
            "per_source_cap": f"per-source cap {self.value}" if self.value else "cap 0 (off)",
            "reranker_max_candidates": f"reranker candidates {self.value}",
            "k": f"raise k to {self.value}",
            "max_tokens": f"max_tokens {self.value}",
        }[self.setting]


class Finding(BaseModel):
    stage: Stage
    sentence: str
    change: Change | None = None  # the smallest change past this stage; None when returned or no setting helps


@dataclass(frozen=True)
class Judged:
    """What one judgement ran on: the request's k and max_tokens and the server's knobs."""

    k: int
    max_tokens: int
    knobs: ReplaySettings

    def applied(self, change: Change) -> Judged:
        if change.setting == "k":
            return Judged(int(change.value), self.max_tokens, self.knobs)
        if change.setting == "max_tokens":
            return Judged(self.k, int(change.value), self.knobs)
        return Judged(self.k, self.max_tokens, knobs_after(self.knobs, [change]))


def knobs_after(knobs: ReplaySettings, changes: list[Change]) -> ReplaySettings:
    """The server's settings once the server-wide changes among `changes` are made (the server caps every arm alike)."""
    for change in changes:
        if change.setting == "per_source_cap":
            knobs = knobs.model_copy(update={"caps": dict.fromkeys(SOURCES, int(change.value)) if change.value else {}})
        elif change.setting == "reranker_max_candidates":
            knobs = knobs.model_copy(update={"reranker_max_candidates": int(change.value)})
    return knobs


def _document_of(node_id: str, traced: TracedRecall) -> str | None:
    """A candidate's document key; None for an observation (it belongs to no document, it is never one of k)."""
    label = traced.labels.get(node_id)
    if label is None:
        return f"memory:{node_id}"
    return label.document_id


def _documents(candidates: list[ScoredCandidate], traced: TracedRecall) -> list[tuple[str, ScoredCandidate]]:
    """Documents in the order of their best candidate, each with that candidate."""
    best: dict[str, ScoredCandidate] = {}
    for cand in candidates:
        key = _document_of(cand.node_id, traced)
        if key is not None and key not in best:
            best[key] = cand
    return list(best.items())


def _rank(documents: list[tuple[str, ScoredCandidate]], document_id: str) -> int | None:
    return next((i for i, (key, _) in enumerate(documents, 1) if key == document_id), None)


def _max_tokens_needed(prediction: Prediction, thinking_budget: int, document: Document, start: int) -> int | None:
    """The smallest max_tokens that lets one of the document's facts into the response (None: none does)."""

    def fits(tokens: int) -> bool:
        return any(c.node_id in document.memory_ids for c in within_budget(prediction.scored, thinking_budget, tokens))

    low, high = start, start * 2
    while not fits(high):
        if high >= MAX_TOKENS_LIMIT:
            return None
        low, high = high, high * 2
    while high - low > 1:  # fits(high), not fits(low)
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def diagnose(traced: TracedRecall, document: Document, judged: Judged) -> Finding:
    """Where `document` was lost on this trace under `judged` (the tag filter is checked on the trace's request)."""
    request, name = traced.request, document.id
    if not tags_admit(document.tags, request.tags, request.tags_match):
        looser = next(
            (m for m in LOOSER_TAGS_MATCH[request.tags_match] if tags_admit(document.tags, request.tags, m)), None
        )
        its = ", ".join(document.tags) or "none"
        return Finding(
            stage="tag_filter",
            sentence=f"{name} was excluded by the tag filter: its tags ({its}) do not pass the request's "
            f"({', '.join(request.tags)}) under tags_match {request.tags_match}.",
            change=Change(setting="tags_match", value=looser) if looser else Change(setting="tags"),
        )
    trace = traced.response.trace
    uncapped = source_lists(trace, judged.knobs.model_copy(update={"caps": {}}))[0]
    arm_ranks = [
        (i, s) for s, hits in uncapped.items() for i, h in enumerate(hits, 1) if h.node_id in document.memory_ids
    ]
    if not arm_ranks:
        return Finding(
            stage="no_arm",
            sentence=f"{name} is in no arm's list: below the semantic floor, no keyword match and no graph link "
            "to this query.",
        )
    facts = trace_facts(trace)
    facts.max_tokens = judged.max_tokens
    prediction = predict(trace, judged.knobs, facts=facts)
    fused = [c for c in prediction.replay.merged if c.node_id in document.memory_ids]
    if not fused:
        best, arm = min(arm_ranks, key=lambda pair: (pair[0], SOURCES.index(pair[1])))  # ties: in fusion order
        return Finding(
            stage="source_cap",
            sentence=f"{name} was cut by the per-source cap of {judged.knobs.cap(arm)}: its best arm rank is "
            f"{ordinal(best)} ({arm}).",
            change=Change(setting="per_source_cap", value=best),
        )
    kept = {c.node_id for c in prediction.kept}
    if not any(c.node_id in kept for c in fused):
        best_fused = min(c.rrf_rank for c in fused)
        return Finding(
            stage="reranker_cut",
            sentence=f"{name} was cut by the reranker's candidate limit of {judged.knobs.reranker_max_candidates}: "
            f"it was {ordinal(best_fused)} after fusion.",
            change=Change(setting="reranker_max_candidates", value=best_fused),
        )
    returned = _documents(prediction.returned, traced)
    rank = _rank(returned, name)
    if rank is None:
        needed = _max_tokens_needed(prediction, facts.thinking_budget, document, judged.max_tokens)
        return Finding(
            stage="cut_by_k",
            sentence=f"{name} was scored but max_tokens {judged.max_tokens} ran out before it.",
            change=Change(setting="max_tokens", value=needed) if needed else None,
        )
    if rank <= judged.k:
        return Finding(
            stage="returned", sentence=f"{name} was returned, {ordinal(rank)} of {min(judged.k, len(returned))}."
        )
    last_key, last = returned[judged.k - 1]
    gap = last.score - returned[rank - 1][1].score
    by_fusion = _rank(_documents(sorted(prediction.scored, key=lambda c: c.rrf_rank), traced), name)
    if by_fusion is not None and by_fusion <= judged.k:
        return Finding(
            stage="outranked",
            sentence=f"{name} was {ordinal(by_fusion)} after fusion but outranked in the scoring after it: it ranks "
            f"{ordinal(rank)}, {gap:.4f} below the last returned ({last_key}).",
            change=Change(setting="k", value=rank),
        )
    return Finding(
        stage="cut_by_k",
        sentence=f"{name} ranks {ordinal(rank)}, below k={judged.k}: it scored {gap:.4f} below the last returned "
        f"({last_key}).",
        change=Change(setting="k", value=rank),
    )


class BankDocument(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    tags: tuple[str, ...] = ()


class WhyNot(BaseModel):
    """The answer: where the document was lost (the first finding) and the changes that bring it in, in order."""

    document_id: str
    stage: Stage
    sentence: str
    changes: list[Change]
    reachable: bool  # False: some stage no setting can pass (no arm found it)
    whose: str | None = None  # opened from a ticket: whether the document is the customer's, by the ticket's rule
    also_returned: list[BankDocument] = []  # other documents the changes bring into the top k (predicted on the traces)
    filter_admits: list[BankDocument] = []  # the bank's documents a looser tag filter lets in besides it (on the bank)

    @property
    def fix(self) -> str:
        if self.stage == "returned":
            return "none needed"
        if not self.reachable:
            found = "; then no setting brings it in" if self.changes else "no setting brings it in"
            return (
                ", ".join(c.describe() for c in self.changes) + found + ": the query has to share its words or meaning"
            )
        return ", ".join(c.describe() for c in self.changes)

    def as_json(self) -> dict:
        return {
            "document_id": self.document_id,
            "stage": self.stage,
            "sentence": self.sentence,
            "fix": self.fix,
            "changes": [c.model_dump() for c in self.changes],
            "reachable": self.reachable,
            "whose": self.whose,
            "also_returned": [d.model_dump() for d in self.also_returned],
            "filter_admits": [d.model_dump() for d in self.filter_admits],
        }

    @property
    def loosens_tags(self) -> Change | None:
        return next((c for c in self.changes if c.setting in ("tags_match", "tags")), None)


def retraced_request(request: TraceRequest, change: Change) -> TraceRequest:
    if change.setting == "tags":
        return request.model_copy(update={"tags": (), "tags_match": "any"})
    return request.model_copy(update={"tags_match": change.value})


def why_not(
    traced: TracedRecall,
    document: Document,
    k: int,
    retrace: Callable[[TraceRequest], TracedRecall],
    knobs: ReplaySettings | None = None,
) -> WhyNot:
    """Where `document` was lost in `traced`, judged under `knobs` (the server's settings by default), and the
    smallest changes that bring it into the top k. `retrace` recalls again with a trace: only a tag filter
    change needs it (the trace holds only what passed the filter)."""
    judged = Judged(k, traced.request.max_tokens, knobs or server_knobs())
    before = top_documents(traced, judged)
    first = finding = diagnose(traced, document, judged)
    changes: list[Change] = []
    while finding.stage != "returned" and finding.change is not None and len(changes) < len(STAGES):
        changes.append(finding.change)
        if finding.change.setting in ("tags_match", "tags"):
            traced = retrace(retraced_request(traced.request, finding.change))
        else:
            judged = judged.applied(finding.change)
        finding = diagnose(traced, document, judged)
    after = top_documents(traced, judged) if changes else before
    taken = {d.id for d in before} | {document.id}
    return WhyNot(
        document_id=document.id,
        stage=first.stage,
        sentence=first.sentence,
        changes=changes,
        reachable=finding.stage == "returned",
        also_returned=[d for d in after if d.id not in taken],
    )


def top_documents(traced: TracedRecall, judged: Judged) -> list[BankDocument]:
    """The k documents the replay returns for this trace under `judged` (what the caller takes), with their tags."""
    if traced.response.trace is None:
        return []
    facts = trace_facts(traced.response.trace)
    facts.max_tokens = judged.max_tokens
    prediction = predict(traced.response.trace, judged.knobs, facts=facts)
    documents = [(key, c) for key, c in _documents(prediction.returned, traced) if not key.startswith("memory:")][
        : judged.k
    ]
    return [
        BankDocument(id=key, tags=traced.labels[c.node_id].tags if c.node_id in traced.labels else ())
        for key, c in documents
    ]


def newly_admitted(
    documents: list[BankDocument], request: TraceRequest, change: Change, besides: str
) -> list[BankDocument]:
    """Of the bank's `documents`, those the changed tag filter lets into the recall's pool that the request's own kept
    out (`besides` the document asked about): what a looser filter also admits."""
    looser = retraced_request(request, change)
    return [
        d
        for d in documents
        if d.id != besides
        and tags_admit(d.tags, looser.tags, looser.tags_match)
        and not tags_admit(d.tags, request.tags, request.tags_match)
    ]


def bank_documents(gateway, bank: str, page: int = MEMORY_PAGE) -> list[BankDocument]:
    """Every document of the bank with its tags (no text), page by page."""
    found: list[BankDocument] = []
    while True:
        listed = gateway.list_documents(bank, limit=page, offset=len(found))
        items = listed.get("items") or []
        found += [BankDocument(id=item["id"], tags=tuple(item.get("tags") or ())) for item in items]
        if not items or len(found) >= int(listed.get("total") or 0):
            return found


# -- reading the document and recalling, through the gateway --------------------------------------------


def load_document(gateway, bank: str, document_id: str) -> Document | None:
    """The document's tags and memory units (every page of them); None when the bank has no such document."""
    stored = gateway.document(bank, document_id)
    if stored is None:
        return None
    ids: set[str] = set()
    while True:
        page = gateway.list_memories(bank, document_id=document_id, limit=MEMORY_PAGE, offset=len(ids))
        items = page.get("items") or []
        ids.update(item["id"] for item in items)
        if not items or len(ids) >= int(page.get("total") or 0):
            break
    return Document(id=stored.id, tags=tuple(stored.tags), memory_ids=frozenset(ids))


def find_documents(gateway, bank: str, text: str, limit: int = SEARCH_LIMIT) -> list[dict[str, str]]:
    """The bank's documents whose id or text contains `text` (the server's own search): {"document", "tags"}."""
    items = gateway.list_documents(bank, search=text.strip(), limit=limit).get("items") or []
    return [{"document": item["id"], "tags": ", ".join(item.get("tags") or [])} for item in items]


def explain(
    gateway,
    request: TraceRequest,
    document: Document,
    k: int,
    knobs: ReplaySettings | None = None,
    traced: TracedRecall | None = None,
) -> WhyNot:
    """Recall `request` again with a trace (or use `traced`, a trace of it already fetched) and say why not."""
    traced = traced or fetch_trace(gateway, request)
    answer = why_not(traced, document, k, lambda again: fetch_trace(gateway, again), knobs)
    loosened = answer.loosens_tags
    if loosened is None:
        return answer
    admits = newly_admitted(bank_documents(gateway, request.bank), request, loosened, document.id)
    return answer.model_copy(update={"filter_admits": admits})

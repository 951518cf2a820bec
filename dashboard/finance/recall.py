"""Two-stage recall for a finance exception: exact precedents first, broader ones only to fill k.

Pass 1 asks for records tagged with BOTH `vendor:<code>` and `type:<type>` (`all_strict`); pass 2, run
only when pass 1 returns fewer than k, asks for records with EITHER tag (`any_strict`). Results are
deduplicated by document and trimmed to k documents, exact ones first, so a vendor with a richer
history can never crowd this vendor's own precedents out of the top k.

The document is the precedent (hindsight.documents): with an LLM the server returns several extracted
facts per document, and k, relevance, votes and citations count documents, each shown with its original
text and the facts that matched. A pass whose token budget ran out before it held k documents asks again
with twice the budget (at most MAX_TOKENS_CAP). Observations are never precedents: they are kept apart
(`observations`), with their source facts, and one derived from the case's own decision is dropped.

The crowd-out check compares that result with the top k of a single `any_strict` pass. That single
pass IS pass 2, so when pass 2 runs its response is reused (no extra call); when pass 2 is skipped the
check costs one more call and is made only on demand (`check_crowd_out`).

Human decisions first: when pass 1 fills k, older precedents may crowd the latest reviewer
decisions out of it, so the second call asks for vendor + type + `source:reviewer` instead of the broader
pass; reviewer decisions always come first in the exact evidence, newest first. A case's own decision is
never its evidence (`own_document`). `decisions_first=False` is the AP seed's recall exactly.

Two server calls per case at most, unless a budget had to grow. No Streamlit here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dashboard.finance.models import (
    EXCEPTION_TYPES,
    REVIEWER_TAG,
    ExceptionCase,
    _HasVendor,
    decision_scope,
    type_tag,
    vendor_tag,
)
from dashboard.hindsight.calls import AsyncRecallFn, RecallFn
from dashboard.hindsight.documents import RecalledDocument, RecalledDocuments, RecalledObservation, group
from dashboard.hindsight.wire import Budget, RecallResponse, Scores, TagsMatch
from dashboard.trust.origin import Origin
from dashboard.trust.screen import Flag

DEFAULT_K = 5
MAX_K = 50
# Lean requests. Recall has no result limit: max_tokens is what bounds a response. A precedent
# document is ~60-120 tokens (its facts about as much); ask for about what k documents need. `budget` is the per-arm candidate
# limit (low 100, mid 300, high 1000); both passes are tag-filtered in SQL, so the candidates are
# already this vendor/type's records. Chosen by measurement (`python -m benches recall`, README
# "Performance"): at 10k memories budget "low" changed which exact precedents made the top k in 4 of 8
# cases (overlap 82%), so the budget stays "mid"; max_tokens for k keeps the same top k (8/8).
TOKENS_PER_RECORD = 300
MIN_MAX_TOKENS = 1024
MAX_TOKENS_CAP = 4 * TOKENS_PER_RECORD * MAX_K  # how far a pass's budget may grow to hold k documents
LEAN_BUDGET: Budget = "mid"
LEAN_TYPES: list[str] | None = None  # None = the server's default fact types (see README "Performance")

Pass = Literal["exact", "broader"]


class InvalidCase(ValueError):
    """The vendor or the exception type of a case is missing or unknown; the message names the field."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


class CaseKey(_HasVendor):
    """What the recall is about: one vendor and one exception type (validated, tag-safe)."""

    vendor_name: str = ""

    @classmethod
    def parse(cls, vendor_code: str | None, exception_type: str | None, vendor_name: str = "") -> CaseKey:
        vendor_code = (vendor_code or "").strip()
        exception_type = (exception_type or "").strip()
        if not vendor_code:
            raise InvalidCase("vendor", "is required (a vendor code such as V01)")
        if not exception_type:
            raise InvalidCase("type", f"is required (one of {', '.join(EXCEPTION_TYPES)})")
        if exception_type not in EXCEPTION_TYPES:
            raise InvalidCase(
                "type", f"unknown exception type {exception_type!r}; expected one of {', '.join(EXCEPTION_TYPES)}"
            )
        try:
            return cls(vendor_code=vendor_code, exception_type=exception_type, vendor_name=vendor_name)
        except ValidationError as exc:
            raise InvalidCase("vendor", exc.errors()[0]["msg"].removeprefix("Value error, ")) from None

    @classmethod
    def of(cls, case: ExceptionCase) -> CaseKey:
        return cls(vendor_code=case.vendor_code, exception_type=case.exception_type, vendor_name=case.vendor_name)

    @property
    def tags(self) -> list[str]:
        return [vendor_tag(self.vendor_code), type_tag(self.exception_type)]

    @property
    def scope(self) -> str:
        return decision_scope(self.vendor_code, self.exception_type)

    def default_query(self) -> str:
        return f"{self.exception_type.replace('_', ' ')} for vendor {self.vendor_code} {self.vendor_name}".strip()


def claims_human(record: RecalledDocument | PrecedentEvidence) -> bool:
    """Presents itself as a reviewer's decision (tagged `source:reviewer`; older ones only say so in their metadata).
    Only an order: what proves a decision is its signature (PrecedentEvidence.human)."""
    return REVIEWER_TAG in record.tags or record.metadata.get("source") == "reviewer"


class MatchedFact(BaseModel):
    """A fact of a precedent document that the recall returned (its text as the server rewrote it)."""

    id: str
    text: str
    scores: Scores = Field(default_factory=Scores)


class PrecedentEvidence(BaseModel):
    """One recalled document as the reviewer sees it. `relevant` is set by policy.mark_relevance."""

    model_config = ConfigDict(populate_by_name=True)

    id: str  # the document id (a memory id only for a memory stored without one)
    document_id: str | None = None
    text: str  # the document's original text (or its facts', when the response held no chunk of it)
    verbatim: bool = True  # `text` is the original text
    facts: list[MatchedFact] = Field(default_factory=list)  # the facts that matched, best first
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    scores: Scores = Field(default_factory=Scores)  # its best fact's
    pass_: Pass = Field(alias="pass")
    rank: int  # 1-based position in the two-stage result
    relevant: bool = False
    written_at: str | None = None  # when the writer said it was written (its facts' mentioned_at): the burst window
    context: str | None = None  # the context it was retained with (the screen reads it too)
    # Set by finance.trust.mark_trust: who wrote it (as its signature proves), what its text says to the agent, and
    # why it is set aside (never cited, never a vote), if it is.
    origin: Origin = Field(default_factory=lambda: Origin(kind="unknown"))
    flags: list[Flag] = Field(default_factory=list)
    set_aside: str | None = None

    @property
    def human(self) -> bool:
        """A reviewer's decision this dashboard recorded (its signature proves it): the only record with authority."""
        return self.origin.reviewer

    @property
    def ref(self) -> str:
        """How a precedent is named when cited: its document id (e.g. PREC-V02-PRI-01)."""
        return self.id

    @property
    def extracted_facts(self) -> list[MatchedFact]:
        """The matched facts that are not the text itself (with an LLM: the server's rewrites)."""
        return [f for f in self.facts if f.text.strip() != self.text.strip()]

    def as_json(self) -> dict:
        return {
            "id": self.id,
            "document_id": self.document_id,
            "text": self.text,
            "tags": self.tags,
            "relevant": self.relevant,
            "pass": self.pass_,
            "rank": self.rank,
            "outcome": self.metadata.get("outcome"),
            "decided_on": self.metadata.get("decided_on"),
            "scores": self.scores.model_dump(),
            "human": self.human,
            "facts": [f.text for f in self.extracted_facts],
            "origin": self.origin.words,
            "forged_claim": self.origin.forged,
            "flags": [flag.model_dump() for flag in self.flags],
            "set_aside": self.set_aside,
        }

    @classmethod
    def of(cls, document: RecalledDocument, pass_: Pass, rank: int) -> PrecedentEvidence:
        return cls(
            id=document.ref,
            document_id=document.document_id,
            text=document.text,
            verbatim=document.verbatim,
            facts=[MatchedFact(id=f.id, text=f.text, scores=f.scores) for f in document.facts],
            tags=document.tags,
            metadata=document.metadata,
            scores=document.scores,
            pass_=pass_,
            rank=rank,
            written_at=document.facts[0].mentioned_at,
            context=document.facts[0].context,
        )


class PassInfo(BaseModel):
    """One recall call as made (enough to make it again, e.g. with trace=True)."""

    tags: list[str]
    tags_match: TagsMatch
    max_tokens: int
    returned: int  # documents
    budget: Budget = "mid"
    types: list[str] | None = None
    facts: int | None = None  # facts (and observations) the server returned for them
    budget_reached: bool = False  # max_tokens probably ended the response: lower-ranked facts may be missing


class CrowdOut(BaseModel):
    """The single any_strict pass's top k documents, compared with the two-stage result."""

    single_pass_ids: list[str]
    exact_in_result: int
    lost: int  # exact precedents of the two-stage result missing from the single pass's top k
    reused_pass2: bool  # True: computed from pass 2's response, no extra call

    @property
    def crowded_out(self) -> bool:
        return self.lost > 0


class TwoStageResult(BaseModel):
    bank_id: str
    query: str
    key: CaseKey
    k: int
    exact: list[PrecedentEvidence]
    broader: list[PrecedentEvidence]
    pass1: PassInfo
    pass2: PassInfo | None = None
    crowd_out: CrowdOut | None = None  # None when pass 2 was skipped and the check was not asked for
    calls: int
    decisions: PassInfo | None = None  # the human-decisions pass (run when pass 1 filled k)
    own_decision: PrecedentEvidence | None = None  # this case's own decision: shown apart, never evidence
    observations: list[RecalledObservation] = Field(default_factory=list)  # context only: never precedents

    @property
    def pass2_skipped(self) -> bool:
        return self.pass2 is None

    @property
    def records(self) -> list[PrecedentEvidence]:
        return self.exact + self.broader

    @property
    def budget_reached(self) -> bool:
        """A pass's token budget ran out: lower-ranked facts of the documents shown may be missing."""
        return any(p is not None and p.budget_reached for p in (self.pass1, self.pass2, self.decisions))

    def pass2_skipped_reason(self) -> str | None:
        if self.pass2 is not None:
            return None
        why = f"Pass 2 skipped: pass 1 (vendor AND type) returned {self.pass1.returned} exact document(s), enough to fill k={self.k}."
        if self.decisions is not None:
            why += f" The human-decisions pass (vendor AND type AND {REVIEWER_TAG}) returned {self.decisions.returned}, placed first."
        return why

    def with_crowd_out(self, crowd_out: CrowdOut) -> TwoStageResult:
        return self.model_copy(
            update={"crowd_out": crowd_out, "calls": self.calls + (0 if crowd_out.reused_pass2 else 1)}
        )


def max_tokens_for(k: int) -> int:
    return max(MIN_MAX_TOKENS, TOKENS_PER_RECORD * k)


def _check_k(k: int) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
        raise InvalidCase("k", f"must be a whole number from 1 to {MAX_K}, got {k!r}")
    return k


def crowd_out_from(
    single_pass: list[RecalledDocument], exact: list[PrecedentEvidence], k: int, reused_pass2: bool
) -> CrowdOut:
    top = [d.ref for d in single_pass[:k]]
    kept = set(top)
    return CrowdOut(
        single_pass_ids=top,
        exact_in_result=len(exact),
        lost=sum(1 for e in exact if e.id not in kept),
        reused_pass2=reused_pass2,
    )


def _request(key: CaseKey, k: int, budget: Budget | None, types: list[str] | None) -> dict:
    return {"tags": key.tags, "max_tokens": max_tokens_for(k), "budget": budget or LEAN_BUDGET, "types": types}


def _humans_first(documents: list[RecalledDocument]) -> list[RecalledDocument]:
    """Reviewer decisions first, newest first; the others keep their recall order."""
    humans = sorted(
        (d for d in documents if claims_human(d)), key=lambda d: d.metadata.get("decided_at", ""), reverse=True
    )
    return humans + [d for d in documents if not claims_human(d)]


class _Plan:
    """The calls of one two-stage recall, shared by the sync and the async driver: `next_call()` gives the
    arguments of the next recall (None when done), `feed()` takes its response, `result()` the outcome.

    pass 1: all_strict on vendor + type. Then, with `decisions_first` (the default):
      - pass 1 filled k: older precedents may have crowded the latest human decisions out, so the second
        call asks all_strict for vendor + type + `source:reviewer` and puts them first;
      - pass 1 did not fill k: it holds every exact document (human ones included), and the second call
        is the broader any_strict pass, as in the AP seed.
    Without it (the seed's own recall), pass 2 is skipped when pass 1 fills k. A pass that holds fewer
    than k documents because its token budget ran out is asked again with twice the budget. The case's own
    decision (`own_document`) is never evidence: it is kept apart as `own_decision`, and observations
    derived from it are dropped.
    """

    def __init__(self, bank_id, key, query, k, budget, types, own_document, decisions_first):
        self.bank_id, self.key, self.k = bank_id, key, _check_k(k)
        self.query = query.strip() or key.default_query()
        self.req = _request(key, self.k, budget, types)
        self.own_document, self.decisions_first = own_document, decisions_first
        self.own: PrecedentEvidence | None = None
        self.observations: dict[str, RecalledObservation] = {}
        self.calls = 0
        self.stage: str | None = "exact"
        self.call: dict | None = {"tags_match": "all_strict", **self.req}
        self.found: dict[str, tuple[list[RecalledDocument], PassInfo]] = {}

    def next_call(self) -> dict | None:
        return None if self.stage is None else self.call

    def _take(self, response: RecallResponse) -> RecalledDocuments:
        grouped = group(response, self.call["max_tokens"])
        own = next((d for d in grouped.documents if self.own_document and d.document_id == self.own_document), None)
        if own is not None and self.own is None:
            self.own = PrecedentEvidence.of(own, "exact", 0)
        grouped = grouped.without(self.own_document)
        for o in grouped.observations:
            self.observations.setdefault(o.ref, o)
        return grouped

    def feed(self, response: RecallResponse) -> None:
        self.calls += 1
        grouped = self._take(response)
        short = len(grouped.documents) < self.k and self.stage != "decisions"
        if short and grouped.budget_reached and self.call["max_tokens"] < MAX_TOKENS_CAP:
            self.call = {**self.call, "max_tokens": min(MAX_TOKENS_CAP, 2 * self.call["max_tokens"])}
            return  # the same pass again, with room for k documents
        info = PassInfo(
            tags_match=self.call["tags_match"],
            returned=len(grouped.documents),
            facts=grouped.facts,
            budget_reached=grouped.budget_reached,
            **{**self.req, **{k: self.call[k] for k in ("tags", "max_tokens")}},
        )
        self.found[self.stage] = (grouped.documents, info)
        if self.stage != "exact":
            self.stage = None
        elif len(grouped.documents) < self.k:
            self.stage, self.call = "broader", {"tags_match": "any_strict", **self.req}
        elif self.decisions_first:
            self.stage, self.call = (
                "decisions",
                {**self.req, "tags_match": "all_strict", "tags": [*self.key.tags, REVIEWER_TAG]},
            )
        else:
            self.stage = None

    def _exact(self, documents: list[RecalledDocument]) -> tuple[list[PrecedentEvidence], set[str]]:
        exact, seen = [], set()
        for d in documents:
            if d.ref not in seen and len(exact) < self.k:
                seen.add(d.ref)
                exact.append(PrecedentEvidence.of(d, "exact", len(exact) + 1))
        return exact, seen

    def result(self) -> TwoStageResult:
        first, pass1 = self.found["exact"]
        base = {
            "bank_id": self.bank_id,
            "query": self.query,
            "key": self.key,
            "k": self.k,
            "pass1": pass1,
            "calls": self.calls,
            "own_decision": self.own,
            "observations": list(self.observations.values()),
        }
        if "decisions" in self.found:
            humans, decisions = self.found["decisions"]
            exact, _ = self._exact(_humans_first(humans) + first)
            return TwoStageResult(**base, exact=exact, broader=[], decisions=decisions)
        if "broader" not in self.found:  # the seed's recall, pass 1 filled k
            exact, _ = self._exact(first)
            return TwoStageResult(**base, exact=exact, broader=[])
        second, pass2 = self.found["broader"]
        exact, seen = self._exact(_humans_first(first) if self.decisions_first else first)
        broader: list[PrecedentEvidence] = []
        for document in second:
            if len(exact) + len(broader) >= self.k:
                break
            if document.ref not in seen:
                seen.add(document.ref)
                broader.append(PrecedentEvidence.of(document, "broader", len(exact) + len(broader) + 1))
        return TwoStageResult(
            **base,
            exact=exact,
            broader=broader,
            pass2=pass2,
            crowd_out=crowd_out_from(second, exact, self.k, reused_pass2=True),
        )


def two_stage_recall(
    recall: RecallFn,
    bank_id: str,
    key: CaseKey,
    query: str,
    k: int = DEFAULT_K,
    budget: Budget | None = None,
    types: list[str] | None = LEAN_TYPES,
    *,
    own_document: str | None = None,
    decisions_first: bool = True,
) -> TwoStageResult:
    """Exact (all_strict) first, the latest human decisions at the top (see _Plan)."""
    plan = _Plan(bank_id, key, query, k, budget, types, own_document, decisions_first)
    while (call := plan.next_call()) is not None:
        plan.feed(recall(bank_id, plan.query, **call))
    return plan.result()


async def atwo_stage_recall(
    arecall: AsyncRecallFn,
    bank_id: str,
    key: CaseKey,
    query: str,
    k: int = DEFAULT_K,
    budget: Budget | None = None,
    types: list[str] | None = LEAN_TYPES,
    *,
    own_document: str | None = None,
    decisions_first: bool = True,
) -> TwoStageResult:
    """two_stage_recall as a coroutine (for HindsightGateway.recall_many): the same calls, the same result."""
    plan = _Plan(bank_id, key, query, k, budget, types, own_document, decisions_first)
    while (call := plan.next_call()) is not None:
        plan.feed(await arecall(bank_id, plan.query, **call))
    return plan.result()


def check_crowd_out(recall: RecallFn, result: TwoStageResult) -> TwoStageResult:
    """The result with its crowd-out check; costs one call only when pass 2 was skipped."""
    if result.crowd_out is not None:
        return result
    p = result.pass1
    response = recall(
        result.bank_id,
        result.query,
        tags=result.key.tags,
        tags_match="any_strict",
        max_tokens=p.max_tokens,
        budget=p.budget,
        types=p.types,
    )
    single = group(response).without(result.own_decision.document_id if result.own_decision else None).documents
    return result.with_crowd_out(crowd_out_from(single, result.exact, result.k, reused_pass2=False))

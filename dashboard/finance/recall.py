"""Two-stage recall for a finance exception: exact precedents first, broader ones only to fill k.

Pass 1 asks for records tagged with BOTH `vendor:<code>` and `type:<type>` (`all_strict`); pass 2, run
only when pass 1 returns fewer than k, asks for records with EITHER tag (`any_strict`). Results are
deduplicated by memory id and trimmed to k, exact ones first, so a vendor with a richer history can
never crowd this vendor's own precedents out of the top k.

The crowd-out check compares that result with the top k of a single `any_strict` pass. That single
pass IS pass 2, so when pass 2 runs its response is reused (no extra call); when pass 2 is skipped the
check costs one more call and is made only on demand (`check_crowd_out`).

Human decisions first (issue 12): when pass 1 fills k, older precedents may crowd the latest reviewer
decisions out of it, so the second call asks for vendor + type + `source:reviewer` instead of the broader
pass; reviewer decisions always come first in the exact evidence, newest first. A case's own decision is
never its evidence (`own_document`). `decisions_first=False` is the AP seed's recall exactly.

At most two server calls per case. No Streamlit here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dashboard.finance.models import EXCEPTION_TYPES, REVIEWER_TAG, ExceptionCase, _HasVendor, type_tag, vendor_tag
from dashboard.hindsight.calls import AsyncRecallFn, RecallFn
from dashboard.hindsight.wire import Budget, RecalledMemory, Scores, TagsMatch

DEFAULT_K = 5
MAX_K = 50
# Lean requests (issue 7). Recall has no result limit: max_tokens is what bounds a response. A
# precedent is ~60-120 tokens; ask for about what k records need. `budget` is the per-arm candidate
# limit (low 100, mid 300, high 1000); both passes are tag-filtered in SQL, so the candidates are
# already this vendor/type's records. Chosen by measurement (`python -m dashboard bench`, README
# "Performance"): at 10k memories budget "low" changed which exact precedents made the top k in 4 of 8
# cases (overlap 82%), so the budget stays "mid"; max_tokens for k keeps the same top k (8/8).
TOKENS_PER_RECORD = 300
MIN_MAX_TOKENS = 1024
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
            raise InvalidCase("type", f"unknown exception type {exception_type!r}; expected one of {', '.join(EXCEPTION_TYPES)}")
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

    def default_query(self) -> str:
        return f"{self.exception_type.replace('_', ' ')} for vendor {self.vendor_code} {self.vendor_name}".strip()


def is_human(record: RecalledMemory | PrecedentEvidence) -> bool:
    """A reviewer's decision (tagged `source:reviewer`; older ones only say so in their metadata)."""
    return REVIEWER_TAG in record.tags or record.metadata.get("source") == "reviewer"


class PrecedentEvidence(BaseModel):
    """One recalled record as the reviewer sees it. `relevant` is set by recommendation.relevance."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    document_id: str | None = None
    text: str
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    scores: Scores = Field(default_factory=Scores)
    pass_: Pass = Field(alias="pass")
    rank: int  # 1-based position in the two-stage result
    relevant: bool = False

    @property
    def human(self) -> bool:
        return is_human(self)

    @property
    def ref(self) -> str:
        """How a precedent is named when cited: its document id (e.g. PREC-V02-PRI-01), else the memory id."""
        return self.document_id or self.id

    def as_json(self) -> dict:
        return {
            "id": self.id, "document_id": self.document_id, "text": self.text, "tags": self.tags,
            "relevant": self.relevant, "pass": self.pass_, "rank": self.rank,
            "outcome": self.metadata.get("outcome"), "decided_on": self.metadata.get("decided_on"),
            "scores": self.scores.model_dump(), "human": self.human,
        }  # fmt: skip

    @classmethod
    def of(cls, memory: RecalledMemory, pass_: Pass, rank: int) -> PrecedentEvidence:
        return cls(
            id=memory.id, document_id=memory.document_id, text=memory.text, tags=memory.tags,
            metadata=memory.metadata, scores=memory.scores, pass_=pass_, rank=rank,
        )  # fmt: skip


class PassInfo(BaseModel):
    """One recall call as made (enough to make it again, e.g. with trace=True)."""

    tags: list[str]
    tags_match: TagsMatch
    max_tokens: int
    returned: int
    budget: Budget = "mid"
    types: list[str] | None = None


class CrowdOut(BaseModel):
    """The single any_strict pass's top k, compared with the two-stage result."""

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

    @property
    def pass2_skipped(self) -> bool:
        return self.pass2 is None

    @property
    def records(self) -> list[PrecedentEvidence]:
        return self.exact + self.broader

    def pass2_skipped_reason(self) -> str | None:
        if self.pass2 is not None:
            return None
        why = f"Pass 2 skipped: pass 1 (vendor AND type) returned {self.pass1.returned} exact record(s), enough to fill k={self.k}."
        if self.decisions is not None:
            why += f" The human-decisions pass (vendor AND type AND {REVIEWER_TAG}) returned {self.decisions.returned}, placed first."
        return why

    def with_crowd_out(self, crowd_out: CrowdOut) -> TwoStageResult:
        return self.model_copy(update={"crowd_out": crowd_out, "calls": self.calls + (0 if crowd_out.reused_pass2 else 1)})


def max_tokens_for(k: int) -> int:
    return max(MIN_MAX_TOKENS, TOKENS_PER_RECORD * k)


def _check_k(k: int) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
        raise InvalidCase("k", f"must be a whole number from 1 to {MAX_K}, got {k!r}")
    return k


def crowd_out_from(single_pass: list[RecalledMemory], exact: list[PrecedentEvidence], k: int, reused_pass2: bool) -> CrowdOut:
    top = [m.id for m in single_pass[:k]]
    kept = set(top)
    return CrowdOut(
        single_pass_ids=top, exact_in_result=len(exact), lost=sum(1 for e in exact if e.id not in kept), reused_pass2=reused_pass2
    )


def _request(key: CaseKey, k: int, budget: Budget | None, types: list[str] | None) -> dict:
    return {"tags": key.tags, "max_tokens": max_tokens_for(k), "budget": budget or LEAN_BUDGET, "types": types}


def _humans_first(records: list[RecalledMemory]) -> list[RecalledMemory]:
    """Reviewer decisions first, newest first; the others keep their recall order."""
    humans = sorted((m for m in records if is_human(m)), key=lambda m: m.metadata.get("decided_at", ""), reverse=True)
    return humans + [m for m in records if not is_human(m)]


class _Plan:
    """The calls of one two-stage recall, shared by the sync and the async driver.

    pass 1: all_strict on vendor + type. Then, with `decisions_first` (the default):
      - pass 1 filled k: older precedents may have crowded the latest human decisions out, so the second
        call asks all_strict for vendor + type + `source:reviewer` and puts them first;
      - pass 1 did not fill k: it holds every exact record (human ones included), and the second call is
        the broader any_strict pass, as in the AP seed.
    Without it (the seed's own recall), pass 2 is skipped when pass 1 fills k. The case's own decision
    (`own_document`) is never evidence: it is kept apart as `own_decision`.
    """

    def __init__(self, bank_id, key, query, k, budget, types, own_document, decisions_first):
        self.bank_id, self.key, self.k = bank_id, key, _check_k(k)
        self.query = query.strip() or key.default_query()
        self.req = _request(key, self.k, budget, types)
        self.own_document, self.decisions_first = own_document, decisions_first
        self.own: PrecedentEvidence | None = None

    def _split_own(self, memories: list[RecalledMemory]) -> list[RecalledMemory]:
        kept = []
        for m in memories:
            if self.own_document and m.document_id == self.own_document:
                self.own = self.own or PrecedentEvidence.of(m, "exact", 0)
            else:
                kept.append(m)
        return kept

    def first(self) -> dict:
        return {"tags_match": "all_strict", **self.req}

    def second(self, first: list[RecalledMemory]) -> dict | None:
        """The second call's arguments, or None when the result is complete."""
        self.first_results = self._split_own(first)
        self.pass1 = PassInfo(tags_match="all_strict", returned=len(first), **self.req)
        if len(self.first_results) < self.k:
            return {"tags_match": "any_strict", **self.req}
        if self.decisions_first:
            return {**self.req, "tags_match": "all_strict", "tags": [*self.key.tags, REVIEWER_TAG]}
        return None

    def _exact(self, memories: list[RecalledMemory]) -> tuple[list[PrecedentEvidence], set[str]]:
        exact, seen = [], set()
        for m in memories:
            if m.id not in seen and len(exact) < self.k:
                seen.add(m.id)
                exact.append(PrecedentEvidence.of(m, "exact", len(exact) + 1))
        return exact, seen

    def result(self, second: list[RecalledMemory] | None) -> TwoStageResult:
        base = {"bank_id": self.bank_id, "query": self.query, "key": self.key, "k": self.k, "pass1": self.pass1}
        if second is None:  # the seed's recall, pass 1 filled k
            exact, _ = self._exact(self.first_results)
            return TwoStageResult(**base, exact=exact, broader=[], calls=1, own_decision=self.own)
        second = self._split_own(second)
        if len(self.first_results) >= self.k:  # second was the human-decisions pass
            exact, _ = self._exact(_humans_first(second) + self.first_results)
            decisions = PassInfo(tags_match="all_strict", returned=len(second), **{**self.req, "tags": [*self.key.tags, REVIEWER_TAG]})
            return TwoStageResult(**base, exact=exact, broader=[], decisions=decisions, calls=2, own_decision=self.own)
        ordered = _humans_first(self.first_results) if self.decisions_first else self.first_results
        exact, seen = self._exact(ordered)
        broader: list[PrecedentEvidence] = []
        for memory in second:
            if len(exact) + len(broader) >= self.k:
                break
            if memory.id not in seen:
                seen.add(memory.id)
                broader.append(PrecedentEvidence.of(memory, "broader", len(exact) + len(broader) + 1))
        pass2 = PassInfo(tags_match="any_strict", returned=len(second), **self.req)
        return TwoStageResult(
            **base, exact=exact, broader=broader, pass2=pass2, calls=2, own_decision=self.own,
            crowd_out=crowd_out_from(second, exact, self.k, reused_pass2=True),
        )  # fmt: skip


def two_stage_recall(
    recall: RecallFn, bank_id: str, key: CaseKey, query: str, k: int = DEFAULT_K,
    budget: Budget | None = None, types: list[str] | None = LEAN_TYPES,
    *, own_document: str | None = None, decisions_first: bool = True,
) -> TwoStageResult:  # fmt: skip
    """Exact (all_strict) first, the latest human decisions at the top; at most two calls (see _Plan)."""
    plan = _Plan(bank_id, key, query, k, budget, types, own_document, decisions_first)
    nxt = plan.second(recall(bank_id, plan.query, **plan.first()).results)
    return plan.result(None if nxt is None else recall(bank_id, plan.query, **nxt).results)


async def atwo_stage_recall(
    arecall: AsyncRecallFn, bank_id: str, key: CaseKey, query: str, k: int = DEFAULT_K,
    budget: Budget | None = None, types: list[str] | None = LEAN_TYPES,
    *, own_document: str | None = None, decisions_first: bool = True,
) -> TwoStageResult:  # fmt: skip
    """two_stage_recall as a coroutine (for HindsightGateway.recall_many): the same calls, the same result."""
    plan = _Plan(bank_id, key, query, k, budget, types, own_document, decisions_first)
    nxt = plan.second((await arecall(bank_id, plan.query, **plan.first())).results)
    return plan.result(None if nxt is None else (await arecall(bank_id, plan.query, **nxt)).results)


def check_crowd_out(recall: RecallFn, result: TwoStageResult) -> TwoStageResult:
    """The result with its crowd-out check; costs one call only when pass 2 was skipped."""
    if result.crowd_out is not None:
        return result
    p = result.pass1
    single = recall(
        result.bank_id, result.query, tags=result.key.tags, tags_match="any_strict", max_tokens=p.max_tokens,
        budget=p.budget, types=p.types,
    ).results  # fmt: skip
    return result.with_crowd_out(crowd_out_from(single, result.exact, result.k, reused_pass2=False))

"""Two-stage recall for a finance exception: exact precedents first, broader ones only to fill k.

Pass 1 asks for records tagged with BOTH `vendor:<code>` and `type:<type>` (`all_strict`); pass 2, run
only when pass 1 returns fewer than k, asks for records with EITHER tag (`any_strict`). Results are
deduplicated by memory id and trimmed to k, exact ones first, so a vendor with a richer history can
never crowd this vendor's own precedents out of the top k.

The crowd-out check compares that result with the top k of a single `any_strict` pass. That single
pass IS pass 2, so when pass 2 runs its response is reused (no extra call); when pass 2 is skipped the
check costs one more call and is made only on demand (`check_crowd_out`).

At most two server calls per case, one when pass 1 fills k. No Streamlit here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dashboard.finance.models import EXCEPTION_TYPES, ExceptionCase, _HasVendor, type_tag, vendor_tag
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
    def ref(self) -> str:
        """How a precedent is named when cited: its document id (e.g. PREC-V02-PRI-01), else the memory id."""
        return self.document_id or self.id

    def as_json(self) -> dict:
        return {
            "id": self.id, "document_id": self.document_id, "text": self.text, "tags": self.tags,
            "relevant": self.relevant, "pass": self.pass_, "rank": self.rank,
            "outcome": self.metadata.get("outcome"), "decided_on": self.metadata.get("decided_on"),
            "scores": self.scores.model_dump(),
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

    @property
    def pass2_skipped(self) -> bool:
        return self.pass2 is None

    @property
    def records(self) -> list[PrecedentEvidence]:
        return self.exact + self.broader

    def pass2_skipped_reason(self) -> str | None:
        if self.pass2 is not None:
            return None
        return f"Pass 2 skipped: pass 1 (vendor AND type) returned {self.pass1.returned} exact record(s), enough to fill k={self.k}."

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


def _after_pass1(bank_id: str, key: CaseKey, query: str, k: int, req: dict, first: list[RecalledMemory]):
    """(finished result or None, exact, seen, pass1 info)."""
    exact, seen = [], set()
    for memory in first:
        if memory.id not in seen and len(exact) < k:
            seen.add(memory.id)
            exact.append(PrecedentEvidence.of(memory, "exact", len(exact) + 1))
    pass1 = PassInfo(tags_match="all_strict", returned=len(first), **req)
    if len(first) >= k:
        return TwoStageResult(bank_id=bank_id, query=query, key=key, k=k, exact=exact, broader=[], pass1=pass1, calls=1), exact, seen, pass1
    return None, exact, seen, pass1


def _after_pass2(bank_id, key, query, k, req, exact, seen, pass1, second: list[RecalledMemory]) -> TwoStageResult:
    broader: list[PrecedentEvidence] = []
    for memory in second:
        if len(exact) + len(broader) >= k:
            break
        if memory.id not in seen:
            seen.add(memory.id)
            broader.append(PrecedentEvidence.of(memory, "broader", len(exact) + len(broader) + 1))
    pass2 = PassInfo(tags_match="any_strict", returned=len(second), **req)
    return TwoStageResult(
        bank_id=bank_id, query=query, key=key, k=k, exact=exact, broader=broader, pass1=pass1, pass2=pass2,
        crowd_out=crowd_out_from(second, exact, k, reused_pass2=True), calls=2,
    )  # fmt: skip


def two_stage_recall(
    recall: RecallFn, bank_id: str, key: CaseKey, query: str, k: int = DEFAULT_K,
    budget: Budget | None = None, types: list[str] | None = LEAN_TYPES,
) -> TwoStageResult:  # fmt: skip
    """Exact (all_strict) first; broader (any_strict) only when pass 1 returns fewer than k."""
    k = _check_k(k)
    query = query.strip() or key.default_query()
    req = _request(key, k, budget, types)
    first = recall(bank_id, query, tags_match="all_strict", **req).results
    done, exact, seen, pass1 = _after_pass1(bank_id, key, query, k, req, first)
    if done is not None:
        return done
    second = recall(bank_id, query, tags_match="any_strict", **req).results
    return _after_pass2(bank_id, key, query, k, req, exact, seen, pass1, second)


async def atwo_stage_recall(
    arecall: AsyncRecallFn, bank_id: str, key: CaseKey, query: str, k: int = DEFAULT_K,
    budget: Budget | None = None, types: list[str] | None = LEAN_TYPES,
) -> TwoStageResult:  # fmt: skip
    """two_stage_recall as a coroutine (for HindsightGateway.recall_many): the same calls, the same result."""
    k = _check_k(k)
    query = query.strip() or key.default_query()
    req = _request(key, k, budget, types)
    first = (await arecall(bank_id, query, tags_match="all_strict", **req)).results
    done, exact, seen, pass1 = _after_pass1(bank_id, key, query, k, req, first)
    if done is not None:
        return done
    second = (await arecall(bank_id, query, tags_match="any_strict", **req)).results
    return _after_pass2(bank_id, key, query, k, req, exact, seen, pass1, second)


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

"""A finance case's queue-wide flags, computed from its two-stage result as it is recalled, and kept in
the review store so the queue table and the Overview show them at once, for every reviewer, after a
restart. Pure functions, and `keep`, which writes them through the review store's Casework. No Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from dashboard.finance.policy import assess, swung_by
from dashboard.finance.recall import TwoStageResult
from dashboard.review.casework import Casework
from dashboard.review.flag_counts import (
    RECALL as KEY,  # the store key of these flags (a case's incidents live beside them)
)
from dashboard.trust.bursts import AskServer
from dashboard.trust.origin import OriginOf


class FinanceFlags(BaseModel):
    k: int
    exact: int  # exact precedents (this vendor AND type) in the evidence
    relevant: int  # relevant records among all recalled (exact, and broader ones that are relevant)
    broader: int
    action: str  # the agent's recommendation
    confidence: float
    policy: str
    crowd_out_lost: int | None = None  # exact precedents a single any_strict pass would lose; None = not checked
    exact_ids: list[str]  # the exact evidence the crowd-out check was made on
    # memory you can trust (finance.trust): the records set aside, those claiming a reviewer's authority they lack,
    # those whose text the screen flags, and the untrusted records (set aside, or of unknown origin) the
    # recommendation would turn on
    set_aside: list[str] = Field(default_factory=list)
    forged: list[str] = Field(default_factory=list)
    screened: list[str] = Field(default_factory=list)
    swung_by: list[str] = Field(default_factory=list)

    @property
    def crowd_out(self) -> str:
        """What a plain single search would have lost, in words (the two-stage recall kept them)."""
        if self.crowd_out_lost is None:
            return "not checked"
        return f"{self.crowd_out_lost} exact precedent(s)" if self.crowd_out_lost else "none"


def finance_flags(
    result: TwoStageResult, origin: OriginOf | None = None, ask_server: AskServer | None = None
) -> FinanceFlags:
    """The flags of one recall: counts, the recommendation the policy gives on it, the crowd-out check, the records
    it may not trust (`origin`: the review store's check of a record's signature, `ask_server`: the bank's server on
    bursts, as for assess)."""
    flagged, rec = assess(result, origin, ask_server=ask_server)
    return FinanceFlags(
        k=result.k,
        exact=len(flagged.exact),
        relevant=sum(1 for r in flagged.records if r.relevant),
        broader=len(flagged.broader),
        action=rec.action,
        confidence=rec.confidence,
        policy=rec.policy,
        crowd_out_lost=None if result.crowd_out is None else result.crowd_out.lost,
        exact_ids=[r.id for r in flagged.exact],
        set_aside=[r.ref for r in flagged.records if r.set_aside],
        forged=[r.ref for r in flagged.records if r.origin.forged],
        screened=[r.ref for r in flagged.records if r.flags],
        swung_by=swung_by(flagged, rec),
    )


def keep_crowd_out(new: FinanceFlags, previous: FinanceFlags | None) -> FinanceFlags:
    """A recall made again without the check keeps the check made before, while the exact evidence is the same
    (the counterfactual depends only on it): an expired cache entry does not forget a crowd-out."""
    if new.crowd_out_lost is not None or previous is None or previous.crowd_out_lost is None:
        return new
    if (previous.k, previous.exact_ids) != (new.k, new.exact_ids):
        return new
    return new.model_copy(update={"crowd_out_lost": previous.crowd_out_lost})


def stored(flags: dict | None) -> FinanceFlags | None:
    """The finance flags in a case's stored flags, or None (not measured yet, or written by an older version)."""
    value = (flags or {}).get(KEY)
    try:
        return FinanceFlags.model_validate(value) if value else None
    except ValueError:
        return None


def keep(
    casework: Casework,
    bank_id: str,
    results: Mapping[str, TwoStageResult],
    origin: OriginOf | None = None,
    ask_server: AskServer | None = None,
) -> None:
    """Store the flags of these cases' results (case id -> result), keeping earlier crowd-out checks that still hold."""
    if not results:
        return
    before = casework.flags(bank_id, "exception", list(results))
    casework.put_many_flags(
        bank_id,
        "exception",
        {
            case_id: {
                KEY: keep_crowd_out(finance_flags(result, origin, ask_server), stored(before.get(case_id))).model_dump(
                    mode="json"
                )
            }
            for case_id, result in results.items()
        },
    )

"""Relevance flags and a deterministic precedent policy for a finance exception. No Streamlit here.

Relevance is read from a record's tags (`vendor:<code>`, `type:<type>`), falling back to its metadata
(`vendor_code`, `exception_type`); it is never guessed from the text. A record whose tag and metadata
disagree is not relevant.

The policy uses relevant precedents only (broader records are shown, never cited), each with the
`outcome` and `decided_on` of its metadata; reviewer decisions retained by this dashboard carry the
same metadata, so they count like any other precedent.

- Guard: no relevant precedent (or none with a known outcome) -> escalate, confidence 0.
- Human authority: a reviewer's decision (tag `source:reviewer`) is a correction of the agent. When the
  newest relevant decision with an outcome is a human one (no precedent decided on a later day), its
  outcome is the recommendation, whatever the number of older precedents: a newer human override
  beats older seeded precedents. Confidence = the share of relevant human decisions that agree with
  it (1.0 for one); it cites them, newest first, and the rationale names the latest human decision.
  A precedent decided after the latest human decision puts the vote below back in charge, the human
  decisions counting as votes.
- Otherwise each precedent is one vote for its outcome. The outcome with most votes wins; a tie goes to
  the outcome of the newest precedent among the tied ones. If fewer than 60% agree, the precedents
  conflict -> escalate, confidence 0.5 x support.
- Confidence = agreement (winning votes / precedents) x support, support = min(1, precedents / 3):
  one precedent is never as strong as three.
- Cited: the precedents that voted for the action, newest first (all of them on a conflict).
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from dashboard.finance.recall import CaseKey, PrecedentEvidence, TwoStageResult
from dashboard.hindsight.wire import tag_value
from dashboard.review.decision import OUTCOMES, Outcome

AGREEMENT_NEEDED = 0.6
FULL_SUPPORT_AT = 3


class Recommendation(BaseModel):
    action: Outcome
    confidence: float = Field(ge=0, le=1)
    cited: list[str] = Field(default_factory=list)
    rationale: str
    policy: Literal["guard", "precedent", "conflict", "human", "no_evidence"]
    votes: dict[str, int] = Field(default_factory=dict)


def _value(record: PrecedentEvidence, tag_prefix: str, metadata_key: str) -> tuple[str | None, bool]:
    """(value, consistent): the tag wins; metadata is the fallback; a disagreement is inconsistent."""
    tag = tag_value(record.tags, tag_prefix)
    meta = record.metadata.get(metadata_key) or None
    if tag is not None and meta is not None and tag != meta:
        return tag, False
    return tag if tag is not None else meta, True


def is_relevant(record: PrecedentEvidence, key: CaseKey) -> bool:
    """Same vendor AND same exception type, from the record's tags/metadata."""
    vendor, vendor_ok = _value(record, "vendor", "vendor_code")
    etype, type_ok = _value(record, "type", "exception_type")
    return vendor_ok and type_ok and vendor == key.vendor_code and etype == key.exception_type


def mark_relevance(result: TwoStageResult) -> TwoStageResult:
    flag = lambda records: [r.model_copy(update={"relevant": is_relevant(r, result.key)}) for r in records]  # noqa: E731
    return result.model_copy(update={"exact": flag(result.exact), "broader": flag(result.broader)})


def _about(key: CaseKey) -> str:
    vendor = f"vendor {key.vendor_code}" + (f" ({key.vendor_name})" if key.vendor_name else "")
    return f"{vendor} with a {key.exception_type.replace('_', ' ')} exception"


def _newest_first(records: list[PrecedentEvidence]) -> list[PrecedentEvidence]:
    # decided_on is an ISO date: string order is date order; ties keep recall rank.
    by_rank = sorted(records, key=lambda r: r.rank)
    return sorted(by_rank, key=lambda r: r.metadata.get("decided_on", ""), reverse=True)


def _decided_on(record: PrecedentEvidence) -> str:
    return record.metadata.get("decided_on", "")


def _human_authority(key: CaseKey, usable: list[PrecedentEvidence], latest: PrecedentEvidence, not_cited: int) -> Recommendation:
    humans = [r for r in usable if r.human]
    outcome = latest.metadata["outcome"]
    agreeing = [r for r in humans if r.metadata["outcome"] == outcome]
    older = [r for r in usable if not r.human]
    older_votes = Counter(r.metadata["outcome"] for r in older)
    older_note = (
        f" It takes precedence over {len(older)} older precedent(s) ("
        + ", ".join(f"{n} {o}" for o, n in older_votes.items()) + ")."
    ) if older else ""
    who = latest.metadata.get("reviewer") or "a reviewer"
    overrode = latest.metadata.get("overridden") == "true"
    verdict = f", overriding the agent's {latest.metadata.get('agent_recommendation')}" if overrode else ""
    others = f" {len(agreeing) - 1} other human decision(s) agree." if len(agreeing) > 1 else ""
    disagree = f" {len(humans) - len(agreeing)} older human decision(s) differ." if len(humans) > len(agreeing) else ""
    broader_note = f" {not_cited} other record(s) were recalled for context and are not cited." if not_cited else ""
    return Recommendation(
        action=outcome, confidence=round(len(agreeing) / len(humans), 2), cited=[r.ref for r in agreeing],
        policy="human", votes=dict(Counter(r.metadata["outcome"] for r in usable)),
        rationale=(
            f"Latest human decision for {_about(key)}: {latest.ref}, {outcome} by {who} on "
            f"{latest.metadata.get('decided_on', 'an unknown date')}{verdict}. A newer human decision has authority."
            f"{older_note}{others}{disagree}{broader_note}"
        ),
    )


def recommend(result: TwoStageResult) -> Recommendation:
    """The recommendation for a result whose relevance flags are set (see mark_relevance)."""
    key, recalled = result.key, result.records
    relevant = [r for r in recalled if r.relevant]
    not_cited = len(recalled) - len(relevant)
    if not relevant:
        return Recommendation(
            action="escalate", confidence=0.0, policy="guard",
            rationale=(
                f"No relevant precedent: {len(recalled)} record(s) were recalled but none concern {_about(key)}. "
                "Escalate for a human decision."
            ),
        )
    usable = _newest_first([r for r in relevant if r.metadata.get("outcome") in OUTCOMES])
    if not usable:
        return Recommendation(
            action="escalate", confidence=0.0, policy="guard",
            rationale=(
                f"No usable precedent: {len(relevant)} relevant record(s) concern {_about(key)} "
                "but none records an outcome. Escalate for a human decision."
            ),
        )

    latest_human = next((r for r in usable if r.human), None)
    if latest_human is not None and _decided_on(latest_human) >= _decided_on(usable[0]):
        return _human_authority(key, usable, latest_human, not_cited)

    votes = Counter(r.metadata["outcome"] for r in usable)
    most = max(votes.values())
    tied = {o for o, n in votes.items() if n == most}
    winner = next(r.metadata["outcome"] for r in usable if r.metadata["outcome"] in tied)  # newest among the tied
    n = len(usable)
    agreement = votes[winner] / n
    support = min(1.0, n / FULL_SUPPORT_AT)
    counts = ", ".join(f"{votes[o]} {o}" for o in OUTCOMES if votes.get(o))
    broader_note = f" {not_cited} other record(s) were recalled for context and are not cited." if not_cited else ""
    if agreement < AGREEMENT_NEEDED:
        return Recommendation(
            action="escalate", confidence=round(0.5 * support, 2), cited=[r.ref for r in usable], policy="conflict",
            votes=dict(votes),
            rationale=(
                f"Precedents conflict: the {n} relevant precedent(s) for {_about(key)} were decided {counts}; "
                f"no outcome reaches {AGREEMENT_NEEDED:.0%} agreement, so escalate.{broader_note}"
            ),
        )
    cited = [r for r in usable if r.metadata["outcome"] == winner]
    newest = cited[0]
    return Recommendation(
        action=winner, confidence=round(agreement * support, 2), cited=[r.ref for r in cited], policy="precedent",
        votes=dict(votes),
        rationale=(
            f"{votes[winner]} of {n} relevant precedent(s) for {_about(key)} were decided {winner} ({counts}); "
            f"newest: {newest.ref} on {newest.metadata.get('decided_on', 'an unknown date')}. "
            f"{_confidence_words(round(agreement * support, 2), votes[winner], n)}{broader_note}"
        ),
    )


def _confidence_words(confidence: float, agreeing: int, n: int) -> str:
    """Why the confidence is what it is, as a clerk reads it: how many agree, and whether there are enough."""
    agree = "they all agree" if agreeing == n else f"{agreeing} of the {n} agree"
    enough = (f"{n} precedent(s) are fewer than the {FULL_SUPPORT_AT} that give full confidence" if n < FULL_SUPPORT_AT
              else f"there are at least {FULL_SUPPORT_AT} precedents")
    joint = "but" if agreeing == n and n < FULL_SUPPORT_AT else "and"
    return f"Confidence {confidence:.2f}: {agree}, {joint} {enough}."


def no_evidence_recommendation(reason: str) -> Recommendation:
    """What the agent can say when its recall could not run: nothing to cite, so (as the guard) escalate."""
    return Recommendation(
        action="escalate", confidence=0.0, policy="no_evidence",
        rationale=f"No evidence: {reason} Without precedents the guard recommends escalation; your decision is recorded and delivered when Hindsight is back.",
    )


def assess(result: TwoStageResult) -> tuple[TwoStageResult, Recommendation]:
    """Flag relevance, then recommend."""
    flagged = mark_relevance(result)
    return flagged, recommend(flagged)

"""Relevance flags and a deterministic precedent policy for a finance exception. No Streamlit here.

Relevance is read from a record's tags (`vendor:<code>`, `type:<type>`), falling back to its metadata
(`vendor_code`, `exception_type`); it is never guessed from the text. A record whose tag and metadata
disagree is not relevant.

The policy uses relevant precedents only (broader records are shown, never cited), each with the
`outcome` and `decided_on` of its metadata; reviewer decisions retained by this dashboard carry the
same metadata, so they count like any other precedent.

- Trust first (finance.trust): a record that claims to be a reviewer's decision this dashboard never recorded, whose
  text the screen flags, or that repeats a burst, is set aside: shown with why, never cited, never a vote. The
  recommendation says what those records would have made it (`if_trusted`) and which records it rests on (`rests_on`:
  removing one alone changes the action). A vote weighs 1, or what `weights` gives its record's origin.
- Untrusted records inform, never decide: a recommendation that records of unknown origin swing (removing one of
  them alone, or all of them together, changes the action) is escalated to a person, naming them (policy
  "untrusted"); what they would have made it is kept (`would_be`). A lead's vouching gives a record a known origin
  (origin/vouching.py); `untrusted_decides=True` (RECALL_REVIEW_UNTRUSTED_DECIDES) turns the rule off.
- Guard: no relevant precedent (or none with a known outcome) -> escalate, confidence 0.
- Human authority: a reviewer's decision (signed by this dashboard's review store, origin/provenance.py: a
  `source:reviewer` tag proves nothing) is a correction of the agent. When the
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
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

from dashboard.finance.models import OUTCOME_WORDS
from dashboard.finance.recall import CaseKey, PrecedentEvidence, TwoStageResult
from dashboard.finance.trust import mark_trust
from dashboard.hindsight.wire import tag_value
from dashboard.store.decision import OUTCOMES, Outcome
from dashboard.trust.bursts import AskServer
from dashboard.trust.origin import Origin, OriginOf

AGREEMENT_NEEDED = 0.6
FULL_SUPPORT_AT = 3


class Recommendation(BaseModel):
    action: Outcome
    confidence: float = Field(ge=0, le=1)
    cited: list[str] = Field(default_factory=list)
    rationale: str
    policy: Literal["guard", "precedent", "conflict", "human", "no_evidence", "untrusted"]
    votes: dict[str, int] = Field(default_factory=dict)
    untrusted: dict[str, str] = Field(
        default_factory=dict
    )  # relevant records set aside (never cited, never a vote) -> why
    if_trusted: str | None = None  # what it would be with them counted as they claim, when that differs
    rests_on: list[str] = Field(default_factory=list)  # the records whose removal alone would change the action
    swung_by: list[str] = Field(
        default_factory=list
    )  # the records of unknown origin that swing it (escalated for them)
    would_be: str | None = None  # what those records would have made it, escalated (policy "untrusted")


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


def _human_authority(
    key: CaseKey, usable: list[PrecedentEvidence], latest: PrecedentEvidence, not_cited: int
) -> Recommendation:
    humans = [r for r in usable if r.human]
    outcome = latest.metadata["outcome"]
    agreeing = [r for r in humans if r.metadata["outcome"] == outcome]
    older = [r for r in usable if not r.human]
    older_votes = Counter(r.metadata["outcome"] for r in older)
    older_note = (
        (
            f" It takes precedence over {len(older)} older precedent(s) ("
            + ", ".join(f"{n} {o}" for o, n in older_votes.items())
            + ")."
        )
        if older
        else ""
    )
    who = latest.metadata.get("reviewer") or "a reviewer"
    overrode = latest.metadata.get("overridden") == "true"
    agent = (
        f"agent {latest.metadata['agent_name']}'s" if latest.metadata.get("agent_name") else "the agent's"
    )  # who handed it in
    verdict = f", overriding {agent} {latest.metadata.get('agent_recommendation')}" if overrode else ""
    others = f" {len(agreeing) - 1} other human decision(s) agree." if len(agreeing) > 1 else ""
    disagree = f" {len(humans) - len(agreeing)} older human decision(s) differ." if len(humans) > len(agreeing) else ""
    broader_note = f" {not_cited} other record(s) were recalled for context and are not cited." if not_cited else ""
    return Recommendation(
        action=outcome,
        confidence=round(len(agreeing) / len(humans), 2),
        cited=[r.ref for r in agreeing],
        policy="human",
        votes=dict(Counter(r.metadata["outcome"] for r in usable)),
        rationale=(
            f"Latest human decision for {_about(key)}: {latest.ref}, {outcome} by {who} on "
            f"{latest.metadata.get('decided_on', 'an unknown date')}{verdict}. A newer human decision has authority."
            f"{older_note}{others}{disagree}{broader_note}"
        ),
    )


def _weigh(record: PrecedentEvidence, weights: Mapping[str, float]) -> float:
    return weights.get(record.origin.kind, 1.0)


def _usable(relevant: list[PrecedentEvidence], weights: Mapping[str, float]) -> list[PrecedentEvidence]:
    """The relevant records that vote: an outcome, not set aside (finance.trust), a weight above 0; newest first."""
    return _newest_first(
        [
            r
            for r in relevant
            if r.metadata.get("outcome") in OUTCOMES and r.set_aside is None and _weigh(r, weights) > 0
        ]
    )


def _recommend(result: TwoStageResult, weights: Mapping[str, float]) -> Recommendation:
    """The policy on the records that vote (see the module's rules)."""
    key, recalled = result.key, result.records
    relevant = [r for r in recalled if r.relevant]
    not_cited = len(recalled) - len(relevant)
    if not relevant:
        return Recommendation(
            action="escalate",
            confidence=0.0,
            policy="guard",
            rationale=(
                f"No relevant precedent: {len(recalled)} record(s) were recalled but none concern {_about(key)}. "
                "Escalate for a human decision."
            ),
        )
    usable = _usable(relevant, weights)
    if not usable:
        return Recommendation(
            action="escalate",
            confidence=0.0,
            policy="guard",
            rationale=(
                f"No usable precedent: {len(relevant)} relevant record(s) concern {_about(key)} "
                "but none records an outcome and may vote. Escalate for a human decision."
            ),
        )

    latest_human = next((r for r in usable if r.human), None)
    if latest_human is not None and _decided_on(latest_human) >= _decided_on(usable[0]):
        return _human_authority(key, usable, latest_human, not_cited)

    votes = Counter()
    for r in usable:
        votes[r.metadata["outcome"]] += _weigh(r, weights)
    most = max(votes.values())
    tied = {o for o, n in votes.items() if n == most}
    winner = next(r.metadata["outcome"] for r in usable if r.metadata["outcome"] in tied)  # newest among the tied
    n = sum(votes.values())
    agreement = votes[winner] / n
    support = min(1.0, n / FULL_SUPPORT_AT)
    counts = ", ".join(f"{votes[o]:g} {o}" for o in OUTCOMES if votes.get(o))
    broader_note = f" {not_cited} other record(s) were recalled for context and are not cited." if not_cited else ""
    if agreement < AGREEMENT_NEEDED:
        return Recommendation(
            action="escalate",
            confidence=round(0.5 * support, 2),
            cited=[r.ref for r in usable],
            policy="conflict",
            votes={o: round(v) for o, v in votes.items()},
            rationale=(
                f"Precedents conflict: the {len(usable)} relevant precedent(s) for {_about(key)} were decided {counts}; "
                f"no outcome reaches {AGREEMENT_NEEDED:.0%} agreement, so escalate.{broader_note}"
            ),
        )
    cited = [r for r in usable if r.metadata["outcome"] == winner]
    newest = cited[0]
    return Recommendation(
        action=winner,
        confidence=round(agreement * support, 2),
        cited=[r.ref for r in cited],
        policy="precedent",
        votes={o: round(v) for o, v in votes.items()},
        rationale=(
            f"{votes[winner]:g} of {n:g} relevant precedent(s) for {_about(key)} were decided {winner} ({counts}); "
            f"newest: {newest.ref} on {newest.metadata.get('decided_on', 'an unknown date')}. "
            f"{_confidence_words(round(agreement * support, 2), round(votes[winner]), round(n))}{broader_note}"
        ),
    )


def as_they_claim(result: TwoStageResult) -> TwoStageResult:
    """The records counted as they present themselves: nothing set aside, a claimed reviewer's decision as one."""

    def claimed(r: PrecedentEvidence) -> PrecedentEvidence:
        return r.model_copy(
            update={"set_aside": None, "origin": Origin(kind="reviewer") if r.origin.claims_reviewer else r.origin}
        )

    return result.model_copy(
        update={"exact": [claimed(r) for r in result.exact], "broader": [claimed(r) for r in result.broader]}
    )


def _without(result: TwoStageResult, ref: str) -> TwoStageResult:
    return result.model_copy(
        update={
            "exact": [r for r in result.exact if r.ref != ref],
            "broader": [r for r in result.broader if r.ref != ref],
        }
    )


def swung_by(result: TwoStageResult, rec: Recommendation) -> list[str]:
    """The untrusted records `rec` rests on (removing one alone changes it): of unknown origin, or set aside (an agent
    that counts what it should not): an incident, "recommendation swung by an untrusted record"."""
    untrusted = {r.ref for r in result.records if r.origin.kind == "unknown" or r.set_aside}
    return [ref for ref in rec.rests_on if ref in untrusted]


def _unknown_voters(result: TwoStageResult, rec: Recommendation, weights: Mapping[str, float]) -> list[str]:
    """The voting records of unknown origin that swing `rec`: one alone in `rests_on`, else, when leaving all of them
    out changes the action, those that voted for it."""
    unknown = [r for r in _usable([r for r in result.records if r.relevant], weights) if r.origin.kind == "unknown"]
    alone = [r.ref for r in unknown if r.ref in rec.rests_on]
    if alone or not unknown:
        return alone
    without = result
    for r in unknown:
        without = _without(without, r.ref)
    if _recommend(without, weights).action == rec.action:
        return []
    return [r.ref for r in unknown if r.metadata.get("outcome") == rec.action] or [r.ref for r in unknown]


def _escalated(rec: Recommendation, swung: list[str]) -> Recommendation:
    """`rec` escalated to a person because records of unknown origin swing it (the rule: untrusted records inform)."""
    would_be = f"{OUTCOME_WORDS[rec.action]} ({rec.confidence:.2f})"
    return rec.model_copy(
        update={
            # an escalation rests on no record: what swung the action it replaces is `swung_by` (no untrusted_swing incident)
            "action": "escalate",
            "confidence": 0.0,
            "policy": "untrusted",
            "swung_by": swung,
            "would_be": would_be,
            "rests_on": [],
            "rationale": (
                f"Escalated for a person: the precedents would make it {would_be}, but that rests on "
                f"{len(swung)} record(s) of unknown origin ({', '.join(swung)}); a record nobody here wrote informs, it never "
                f"decides. A lead can vouch for records after reviewing them. {rec.rationale}"
            ),
        }
    )


def recommend(
    result: TwoStageResult, weights: Mapping[str, float] | None = None, *, untrusted_decides: bool = False
) -> Recommendation:
    """The recommendation for a result whose relevance and trust are marked (assess does both), with what the
    untrusted records would have made it and the records it rests on (the leave-one-out answers); escalated when
    records of unknown origin swing it, unless `untrusted_decides`."""
    weights = weights or {}
    rec = _recommend(result, weights)
    untrusted = {r.ref: r.set_aside for r in result.records if r.relevant and r.set_aside}
    if untrusted:
        claimed = _recommend(as_they_claim(result), weights)
        if (claimed.action, claimed.confidence) != (rec.action, rec.confidence):
            rec.if_trusted = f"{OUTCOME_WORDS[claimed.action]} ({claimed.confidence:.2f})"
        rec.rationale += f" Set aside as untrusted (never cited, never a vote): {', '.join(untrusted)}."
    rec.untrusted = untrusted
    rec.rests_on = [
        r.ref
        for r in _usable([r for r in result.records if r.relevant], weights)
        if _recommend(_without(result, r.ref), weights).action != rec.action
    ]
    swung = _unknown_voters(result, rec, weights)
    if swung and not untrusted_decides and rec.action != "escalate":
        return _escalated(rec, swung)
    rec.swung_by = swung
    return rec


def _confidence_words(confidence: float, agreeing: int, n: int) -> str:
    """Why the confidence is what it is, as a clerk reads it: how many agree, and whether there are enough."""
    agree = "they all agree" if agreeing == n else f"{agreeing} of the {n} agree"
    enough = (
        f"{n} precedent(s) are fewer than the {FULL_SUPPORT_AT} that give full confidence"
        if n < FULL_SUPPORT_AT
        else f"there are at least {FULL_SUPPORT_AT} precedents"
    )
    joint = "but" if agreeing == n and n < FULL_SUPPORT_AT else "and"
    return f"Confidence {confidence:.2f}: {agree}, {joint} {enough}."


def no_evidence_recommendation(reason: str) -> Recommendation:
    """What the agent can say when its recall could not run: nothing to cite, so (as the guard) escalate."""
    return Recommendation(
        action="escalate",
        confidence=0.0,
        policy="no_evidence",
        rationale=f"No evidence: {reason} Without precedents the guard recommends escalation; your decision is recorded and delivered when Hindsight is back.",
    )


def assess(
    result: TwoStageResult,
    origin: OriginOf | None = None,
    weights: Mapping[str, float] | None = None,
    *,
    untrusted_decides: bool = False,
    ask_server: AskServer | None = None,
) -> tuple[TwoStageResult, Recommendation]:
    """Flag relevance and trust, then recommend. `origin`: the review store's check of a record's signature
    (origin.provenance.Provenance.origin); without it nothing is proven, so no record has a reviewer's authority.
    `weights`: a vote's weight by its record's origin (e.g. {"unknown": 0.5}); 1 when not given. `untrusted_decides`:
    the deployment turned off the rule that escalates what records of unknown origin swing. `ask_server`: the bank's
    server, asked for the write time and meaning of records that could be a burst (finance.trust.mark_trust)."""
    flagged = mark_trust(mark_relevance(result), origin, ask_server)
    return flagged, recommend(flagged, weights, untrusted_decides=untrusted_decides)

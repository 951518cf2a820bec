"""A finance case's evidence judged for trust before the policy reads it. No Streamlit here.

Each record gets who wrote it (its signature, else unknown: dashboard/trust/origin.py), what its original text says to
the agent (the deterministic screen: dashboard/trust/screen.py) and, for a burst of near-identical records from one
origin this dashboard did not sign (dashboard/trust/bursts.py), that all but the newest are set aside: a burst votes
once (what this dashboard wrote itself, the demo seed's precedents say, is not a burst). A record is set aside
(never cited, never a vote, shown with why) when it claims to be a reviewer's decision this dashboard never recorded,
when the screen flags its text, or as a burst's repeat. A reviewer's decision that is not its case's standing decision
(a superseded revision replayed, a copy under another id or in another bank, an edited text: trust/origin.py,
origin/provenance.py) is set aside with that reason. Nothing is dropped: every record stays on the page.
"""

from __future__ import annotations

from functools import partial

from dashboard.finance.recall import PrecedentEvidence, TwoStageResult
from dashboard.trust.bursts import AskServer, Candidate, Record, ServerView, bursts, when
from dashboard.trust.origin import OriginOf, origin_of
from dashboard.trust.screen import screen_record


def why_set_aside(record: PrecedentEvidence) -> str | None:
    """Why a record may not vote, in words (every reason); None when it may."""
    reasons = (
        ["it claims to be a reviewer's decision, but this dashboard never recorded it"] if record.origin.forged else []
    )
    if record.origin.void:
        reasons.append(f"a reviewer's decision without authority: {record.origin.void}")
    if record.flags:
        reasons.append("; ".join(f'its {flag.where} {flag.label} ("{flag.phrase}")' for flag in record.flags))
    return "; and ".join(reasons) or None


def mark_trust(result: TwoStageResult, origin: OriginOf | None, ask_server: AskServer | None = None) -> TwoStageResult:
    """The result with each record's origin, screen flags and, where it may not vote, why. `origin`: the review store's
    check of a record's signature (origin.provenance.Provenance.origin); None proves nothing (every record unknown).
    `ask_server`: the bank's server asked when it wrote the records of unknown origin and which mean the same
    (hindsight/write_facts.py); without it a burst is read on the writer's timestamps and words alone."""

    def judged(r: PrecedentEvidence) -> PrecedentEvidence:
        who = (origin or partial(origin_of, None))(
            r.document_id, r.tags, r.metadata, bank=result.bank_id, text=r.text if r.verbatim else None
        )
        if not r.verbatim:
            who = who.voided(
                "its original text did not come back with the recall, so it cannot be checked against its signature"
            )
        flags = screen_record(r.text, context=r.context, metadata=r.metadata, tags=r.tags, document_id=r.document_id)
        marked = r.model_copy(update={"origin": who, "flags": flags})
        return marked.model_copy(update={"set_aside": why_set_aside(marked)})

    exact, broader = [judged(r) for r in result.exact], [judged(r) for r in result.broader]
    unknown = [r for r in exact + broader if r.set_aside is None and r.origin.kind == "unknown"]
    server = ask_server([Candidate(r.id, r.document_id, r.text) for r in unknown]) if ask_server else ServerView()
    at = lambda r: server.written.get(r.id) or when(r.written_at)  # noqa: E731  the server's clock before the writer's
    # a burst is "in a short window": only records whose writing time is known can be one
    voting = [r for r in unknown if at(r)]
    repeats: dict[str, str] = {}
    for burst in bursts([Record(r.id, r.text, r.origin.kind, at(r)) for r in voting], server.alike):
        members = [r for r in voting if r.id in burst.ids]
        newest = max(members, key=lambda r: (r.metadata.get("decided_on", ""), at(r).isoformat()))
        repeats |= {r.id: f"one of a burst: {burst.summary}; the burst votes once" for r in members if r is not newest}

    def mark(records):
        return [r.model_copy(update={"set_aside": repeats[r.id]}) if r.id in repeats else r for r in records]

    return result.model_copy(update={"exact": mark(exact), "broader": mark(broader)})

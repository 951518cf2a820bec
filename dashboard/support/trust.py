"""A ticket's records judged for trust: who wrote each (its signature, trust/origin.py) and the bursts of near-identical
records one unproven origin wrote (trust/bursts.py); what each text says to the agent is on the record already
(TicketEvidence.flags, trust/screen.py). Support sets nothing aside (the ownership rule decides what reaches an
answer): the ticket shows each flag. No Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

from dashboard.support.recall import TicketEvidence
from dashboard.trust.bursts import AskServer, Candidate, Record, ServerView, bursts, when
from dashboard.trust.origin import OriginOf


def origins_in_words(
    records: Sequence[TicketEvidence], origin: OriginOf, bank: str | None = None, ask_server: AskServer | None = None
) -> dict[str, str]:
    """A record's ref -> who wrote it, in words, and, for a burst's records, that they are one (said on each card).
    With the `bank` they were recalled from, a reviewer's decision that is not its ticket's standing one (superseded,
    copied, edited: trust/origin.py) says so. `ask_server`: the bank's server, asked when it wrote the records of
    unknown origin and which mean the same (hindsight/write_facts.py); without it the writer's timestamps and words."""
    found = {
        e.ref: origin(e.document_id, e.tags, e.metadata, bank=bank, text=e.text if e.verbatim else None)
        for e in records
    }
    words = {ref: o.words for ref, o in found.items()}
    unknown = [e for e in records if found[e.ref].kind == "unknown"]
    server = ask_server([Candidate(e.ref, e.document_id, e.text) for e in unknown]) if ask_server else ServerView()
    at = {
        e.ref: server.written.get(e.ref) or when(e.written_at) for e in unknown
    }  # the server's clock before the writer's
    unproven = [
        Record(e.ref, e.text, "unknown", at[e.ref]) for e in unknown if at[e.ref]
    ]  # a burst needs its writing times
    for burst in bursts(unproven, server.alike):
        for ref in burst.ids:
            words[ref] += f"; one of a burst: {burst.summary}"
    return words

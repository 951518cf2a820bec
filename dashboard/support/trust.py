"""A ticket's records judged for trust: who wrote each (its signature, trust/origin.py) and the bursts of near-identical
records one unproven origin wrote (trust/bursts.py); what each text says to the agent is on the record already
(TicketEvidence.flags, trust/screen.py). Support sets nothing aside (the ownership rule decides what reaches an
answer): the ticket shows each flag. No Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

from dashboard.support.recall import TicketEvidence
from dashboard.trust.bursts import Record, bursts, when
from dashboard.trust.origin import OriginOf


def origins_in_words(records: Sequence[TicketEvidence], origin: OriginOf, bank: str | None = None) -> dict[str, str]:
    """A record's ref -> who wrote it, in words, and, for a burst's records, that they are one (said on each card).
    With the `bank` they were recalled from, a reviewer's decision that is not its ticket's standing one (superseded,
    copied, edited: trust/origin.py) says so."""
    found = {e.ref: origin(e.document_id, e.tags, e.metadata, bank=bank, text=e.text if e.verbatim else None) for e in records}
    words = {ref: o.words for ref, o in found.items()}
    unproven = [Record(e.ref, e.text, "unknown", when(e.written_at)) for e in records  # a burst needs its writing times
                if found[e.ref].kind == "unknown" and when(e.written_at)]
    for burst in bursts(unproven):
        for ref in burst.ids:
            words[ref] += f"; one of a burst: {burst.summary}"
    return words

"""A support lead flags one recalled record for review (e.g. "this looks like Ann Lee's, check the marker").

Flags are kept as casework comments on the record itself (case kind `memory`, case id its document id),
so they are in the review store, survive restarts, are seen by every instance, and follow the record
to every ticket that recalls it. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Iterable

from dashboard.review.casework import Casework, Comment
from dashboard.store.identity import Actor, as_person

RECORD_KIND = "memory"
MAX_NOTE = 1000


class FlagError(ValueError):
    """A flag that cannot be stored; the message names what to fix."""


def flag_record(casework: Casework, bank_id: str, record_id: str, *, author: Actor, ticket_id: str, note: str) -> int:
    author, note = as_person(author or ""), (note or "").strip()
    if not author.name:
        raise FlagError("name: a name is required to flag a record")
    if not record_id:
        raise FlagError("record: no record chosen")
    if len(note) > MAX_NOTE:
        raise FlagError(f"note: {len(note):,} characters; the limit is {MAX_NOTE:,}")
    body = f"Flagged for review on ticket {ticket_id}" + (f": {note}" if note else "")
    return casework.comment(bank_id, RECORD_KIND, record_id, author, body)


def flags_on(casework: Casework, bank_id: str, record_ids: Iterable[str]) -> dict[str, list[Comment]]:
    """record id -> its flags (oldest first), only for flagged records."""
    found = {rid: casework.comments(bank_id, RECORD_KIND, rid) for rid in dict.fromkeys(r for r in record_ids if r)}
    return {rid: flags for rid, flags in found.items() if flags}

"""Who wrote a memory record, as far as it can be proven: a signature in the record's metadata, keyed by a secret the
deployment holds (kept in the review store, so every instance on one store agrees). No Streamlit here.

Anyone who can write to a bank can write any tag or metadata: `source:reviewer`, a `decision-` id, `reviewer: Dana`,
`authenticated: true` prove nothing. What this dashboard writes (a reviewer's decision, the demo seed, a reference
agent's answer, a migration) it signs: HMAC-SHA256 over the document id, the tags and every metadata value (so none
of them can be changed, and a signature copied onto another document fails; a bank's clone keeps its records' origins,
so the fusion lab compares like with like). What such a text says to the agent is the screen's business
(trust/screen.py).

A reviewer's decision is signed as one revision of one case (`Bound`): its signed metadata also names the bank, the
case, the revision, the outcome, the document id and a digest of its text (whitespace collapsed: the server keeps the
original text in its chunks, trimmed). Its authority is the standing decision's: `origin_of` voids it (`Origin.void`,
a reason in words) when it lies in another bank or under another document id than it was signed for, or when its
text is not the text signed; the review store then voids every revision that is not the case's standing one
(origin/provenance.py), and a recall keeps only the newest revision of a case it holds (finance/trust.py).

Decisions signed before revisions were bound (no `rr_revision`) still prove who wrote them; they have authority only
where the review store confirms each is its case's standing decision, with the same outcome and text.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

SIGNATURE, SIGNED_AS, SIGNED_WHO = "rr_signature", "rr_origin", "rr_by"  # the metadata keys this dashboard writes
# ... and, on a reviewer's decision, what it is a decision on (Bound)
BOUND_KEYS = {
    "bank": "rr_bank",
    "case": "rr_case",
    "revision": "rr_revision",
    "outcome": "rr_outcome",
    "document_id": "rr_document",
    "text_sha256": "rr_text",
}
Kind = Literal[
    "reviewer", "seed", "agent", "migration", "vouched", "unknown"
]  # vouched: by two leads (origin/vouching.py)
REVIEWER_TAG = "source:reviewer"
CLAIMING_KEYS = ("reviewer", "authenticated")  # metadata a reviewer's decision carries
CLAIMING_PREFIXES = ("decision-", "ticket-")  # the document ids of the dashboard's own decisions


def text_digest(text: str) -> str:
    """The digest a decision's signature binds its text by: SHA-256 of the text with whitespace runs as one space."""
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()


class Bound(BaseModel):
    """What a reviewer's decision was signed as: one revision of one case (`case`: "<kind>:<id>") in one bank."""

    model_config = ConfigDict(frozen=True)

    bank: str
    case: str
    revision: int
    outcome: str
    document_id: str
    text_sha256: str

    @property
    def case_kind(self) -> str:
        return self.case.partition(":")[0]

    @property
    def case_id(self) -> str:
        return self.case.partition(":")[2]

    def as_metadata(self) -> dict[str, str]:
        return {key: str(getattr(self, name)) for name, key in BOUND_KEYS.items()}

    @classmethod
    def of(cls, metadata: Mapping[str, str]) -> Bound | None:
        """The binding in a record's metadata, None when it has none (or an unreadable one)."""
        if BOUND_KEYS["revision"] not in metadata:
            return None
        try:
            return cls(**{name: metadata.get(key, "") for name, key in BOUND_KEYS.items()})
        except ValueError:
            return None


class Origin(BaseModel):
    """Who wrote a record: `kind` as proven by its signature (else "unknown"), `who` (the reviewer or agent named in
    the signed metadata), and whether the record claims to be a reviewer's decision, signed or not. A reviewer's
    decision also carries what it was signed as (`bound`; None when signed before revisions were bound) and, when it
    is not its case's standing decision here, why (`void`)."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    who: str | None = None
    claims_reviewer: bool = False
    bound: Bound | None = None
    void: str | None = None

    @property
    def reviewer(self) -> bool:
        """The standing decision of a reviewer, recorded by this dashboard's review store: the only record with a human's
        authority."""
        return self.kind == "reviewer" and self.void is None

    @property
    def forged(self) -> bool:
        """It claims to be a reviewer's decision, but this dashboard never recorded it."""
        return self.claims_reviewer and self.kind != "reviewer"

    def voided(self, why: str) -> Origin:
        """This origin without a decision's authority, for `why` (the first reason found stands)."""
        return self if self.void or self.kind != "reviewer" else self.model_copy(update={"void": why})

    @property
    def words(self) -> str:
        """As a card says it."""
        if self.forged:
            return "claims to be a reviewer's decision; not recorded here"
        if self.kind == "reviewer" and self.void:
            return f"this dashboard: {self.who or 'a reviewer'}'s decision, without authority: {self.void}"
        return {
            "reviewer": f"this dashboard: {self.who or 'a reviewer'}'s decision",
            "seed": "the demo seed",
            "agent": f"the reference agent {self.who}" if self.who else "a reference agent",
            "migration": "this dashboard's tag migration",
            "vouched": f"vouched for by {self.who} after review",
            "unknown": "unknown: not written by this dashboard",
        }[self.kind]


# (document id, tags, metadata) -> who wrote it; a caller that has them also passes `bank=` (the bank it recalled the
# record from) and `text=` (the record's original text), so a decision's binding is checked too
OriginOf = Callable[..., Origin]


def claims_reviewer(document_id: str | None, tags: Sequence[str], metadata: Mapping[str, str]) -> bool:
    """Whether a record presents itself as a reviewer's decision (by its tags, its id or its metadata)."""
    return (
        REVIEWER_TAG in tags
        or metadata.get("source") == "reviewer"
        or any(k in metadata for k in CLAIMING_KEYS)
        or (document_id or "").startswith(CLAIMING_PREFIXES)
    )


def _payload(document_id: str | None, tags: Sequence[str], metadata: Mapping[str, str]) -> bytes:
    """What is signed. A bound decision names its document in its metadata, so that a copy under another id is still
    recognised as the decision it copies (and set aside as a copy, with that reason)."""
    signed = {k: v for k, v in metadata.items() if k != SIGNATURE}
    document = "" if BOUND_KEYS["revision"] in signed else document_id or ""
    return json.dumps([document, sorted(tags), sorted(signed.items())], ensure_ascii=False).encode()


def signed_metadata(
    key: bytes,
    document_id: str | None,
    tags: Sequence[str],
    metadata: Mapping[str, str],
    kind: Kind,
    who: str | None = None,
    bound: Bound | None = None,
) -> dict[str, str]:
    """`metadata` with this dashboard's signature: the record was written by it, as `kind` (for `who`); a reviewer's
    decision as what it is `bound` to (origin/provenance.py signs each decision so)."""
    marked = {k: v for k, v in metadata.items() if k not in (SIGNATURE, SIGNED_AS, SIGNED_WHO, *BOUND_KEYS.values())}
    marked[SIGNED_AS] = kind
    if who:
        marked[SIGNED_WHO] = who
    if bound is not None:
        marked |= bound.as_metadata()
    marked[SIGNATURE] = hmac.new(key, _payload(document_id, tags, marked), hashlib.sha256).hexdigest()
    return marked


def origin_of(
    key: bytes | None,
    document_id: str | None,
    tags: Sequence[str],
    metadata: Mapping[str, str],
    *,
    bank: str | None = None,
    text: str | None = None,
) -> Origin:
    """Who wrote the record, as its signature proves (no key: nothing is proven). A reviewer's decision found in
    `bank` with `text` (each checked when given) is void when it is not what it was signed as; one signed before
    revisions were bound is void here: only the review store can confirm it (origin/provenance.py)."""
    claims = claims_reviewer(document_id, tags, metadata)
    signature = metadata.get(SIGNATURE)
    if key is None or not signature:
        return Origin(kind="unknown", claims_reviewer=claims)
    expected = hmac.new(key, _payload(document_id, tags, metadata), hashlib.sha256).hexdigest()
    kind = metadata.get(SIGNED_AS)
    if not hmac.compare_digest(expected, signature) or kind not in ("reviewer", "seed", "agent", "migration"):
        return Origin(kind="unknown", claims_reviewer=claims)
    bound = Bound.of(metadata)
    if BOUND_KEYS["revision"] in metadata and bound is None:
        return Origin(kind="unknown", claims_reviewer=claims)  # a signed binding nobody can read: not this dashboard's
    found = Origin(kind=kind, who=metadata.get(SIGNED_WHO), claims_reviewer=claims, bound=bound)
    return found.voided(why) if (why := broken_binding(found, document_id, bank, text)) else found


def broken_binding(origin: Origin, document_id: str | None, bank: str | None, text: str | None) -> str | None:
    """Why a reviewer's decision is not what it was signed as, in words; None when it is (or nothing says otherwise)."""
    bound = origin.bound
    if origin.kind != "reviewer":
        return None
    if bound is None:
        return "signed before decisions were bound to their revision and text, and no review store confirms it stands"
    if document_id != bound.document_id:
        return f"a copy of {bound.document_id} under another id ({document_id or 'none'})"
    if bank is not None and bank != bound.bank:
        return f"a copy of a decision recorded for another bank ({bound.bank})"
    if text is not None and text_digest(text) != bound.text_sha256:
        return "its text is not the text the reviewer's decision was recorded with: it was changed"
    return None

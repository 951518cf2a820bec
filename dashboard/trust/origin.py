"""Who wrote a memory record, as far as it can be proven: a signature in the record's metadata, keyed by a secret the
deployment holds (kept in the review store, so every instance on one store agrees). No Streamlit here.

Anyone who can write to a bank can write any tag or metadata: `source:reviewer`, a `decision-` id, `reviewer: Dana`,
`authenticated: true` prove nothing. What this dashboard writes (a reviewer's decision, the demo seed, a reference
agent's answer, a migration) it signs: HMAC-SHA256 over the document id, the tags and every metadata value (so none
of them can be changed, and a signature copied onto another document fails; a bank's clone keeps its records' origins,
so the fusion lab compares like with like). The text is not
signed: with an LLM the server keeps a document's text in its own form, and a record's authority lives in its tags and
metadata; what a text says to the agent is the screen's business (trust/screen.py).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

SIGNATURE, SIGNED_AS, SIGNED_WHO = "rr_signature", "rr_origin", "rr_by"  # the metadata keys this dashboard writes
Kind = Literal["reviewer", "seed", "agent", "migration", "unknown"]
REVIEWER_TAG = "source:reviewer"
CLAIMING_KEYS = ("reviewer", "authenticated")  # metadata a reviewer's decision carries
CLAIMING_PREFIXES = ("decision-", "ticket-")  # the document ids of the dashboard's own decisions


class Origin(BaseModel):
    """Who wrote a record: `kind` as proven by its signature (else "unknown"), `who` (the reviewer or agent named in
    the signed metadata), and whether the record claims to be a reviewer's decision, signed or not."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    who: str | None = None
    claims_reviewer: bool = False

    @property
    def reviewer(self) -> bool:
        """A reviewer's decision recorded by this dashboard's review store: the only record with a human's authority."""
        return self.kind == "reviewer"

    @property
    def forged(self) -> bool:
        """It claims to be a reviewer's decision, but this dashboard never recorded it."""
        return self.claims_reviewer and not self.reviewer

    @property
    def words(self) -> str:
        """As a card says it."""
        if self.forged:
            return "claims to be a reviewer's decision; not recorded here"
        return {
            "reviewer": f"this dashboard: {self.who or 'a reviewer'}'s decision",
            "seed": "the demo seed",
            "agent": f"the reference agent {self.who}" if self.who else "a reference agent",
            "migration": "this dashboard's tag migration",
            "unknown": "unknown: not written by this dashboard",
        }[self.kind]


OriginOf = Callable[[str | None, Sequence[str], Mapping[str, str]], Origin]  # (document id, tags, metadata) -> who wrote it


def claims_reviewer(document_id: str | None, tags: Sequence[str], metadata: Mapping[str, str]) -> bool:
    """Whether a record presents itself as a reviewer's decision (by its tags, its id or its metadata)."""
    return (
        REVIEWER_TAG in tags or metadata.get("source") == "reviewer" or any(k in metadata for k in CLAIMING_KEYS)
        or (document_id or "").startswith(CLAIMING_PREFIXES)
    )


def _payload(document_id: str | None, tags: Sequence[str], metadata: Mapping[str, str]) -> bytes:
    signed = {k: v for k, v in metadata.items() if k != SIGNATURE}
    return json.dumps([document_id or "", sorted(tags), sorted(signed.items())], ensure_ascii=False).encode()


def signed_metadata(key: bytes, document_id: str | None, tags: Sequence[str], metadata: Mapping[str, str],
                    kind: Kind, who: str | None = None) -> dict[str, str]:
    """`metadata` with this dashboard's signature: the record was written by it, as `kind` (for `who`)."""
    marked = {k: v for k, v in metadata.items() if k not in (SIGNATURE, SIGNED_AS, SIGNED_WHO)}
    marked[SIGNED_AS] = kind
    if who:
        marked[SIGNED_WHO] = who
    marked[SIGNATURE] = hmac.new(key, _payload(document_id, tags, marked), hashlib.sha256).hexdigest()
    return marked


def origin_of(key: bytes | None, document_id: str | None, tags: Sequence[str], metadata: Mapping[str, str]) -> Origin:
    """Who wrote the record, as its signature proves (no key: nothing is proven)."""
    claims = claims_reviewer(document_id, tags, metadata)
    signature = metadata.get(SIGNATURE)
    if key is None or not signature:
        return Origin(kind="unknown", claims_reviewer=claims)
    expected = hmac.new(key, _payload(document_id, tags, metadata), hashlib.sha256).hexdigest()
    kind = metadata.get(SIGNED_AS)
    if not hmac.compare_digest(expected, signature) or kind not in ("reviewer", "seed", "agent", "migration"):
        return Origin(kind="unknown", claims_reviewer=claims)
    return Origin(kind=kind, who=metadata.get(SIGNED_WHO), claims_reviewer=claims)

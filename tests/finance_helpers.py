"""Shared helpers for the finance tests: precedent records and a recall double."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

from dashboard.hindsight.wire import Chunk, MemoryRecord, RecalledMemory, RecallResponse
from dashboard.trust.origin import Bound, Kind, origin_of, signed_metadata, text_digest

KEY = b"finance-helpers-test-key-0123456"
PROVEN = partial(origin_of, KEY)  # what assess is given to check a record's signature (the review store's, in the app)


def signed(
    record: MemoryRecord, kind: Kind = "reviewer", who: str | None = "Dana", bank: str = "bank", revision: int = 1
) -> MemoryRecord:
    """`record` as this dashboard writes it, signed with KEY (a reviewer's decision by default: as `revision` of the
    case its document id names, in `bank`, the bank the tests recall from)."""
    return record.model_copy(
        update={
            "metadata": signed_metadata(
                KEY,
                record.document_id,
                record.tags,
                record.metadata,
                kind,
                who,
                bound_as(record, bank, revision) if kind == "reviewer" else None,
            )
        }
    )


def bound_as(record: MemoryRecord, bank: str, revision: int = 1) -> Bound:
    """What the review store signs a reviewer's decision `record` as: `revision` of the case its document id names."""
    case = (record.document_id or "").removeprefix("decision-").removeprefix("ticket-")
    kind = "ticket" if (record.document_id or "").startswith("ticket-") else "exception"
    return Bound(
        bank=bank,
        case=f"{kind}:{case}",
        revision=revision,
        outcome=record.metadata.get("outcome", ""),
        document_id=record.document_id or "",
        text_sha256=text_digest(record.content),
    )


def precedent(
    doc: str, vendor: str, etype: str, outcome: str = "approve", decided_on: str = "2025-06-01", text: str = ""
) -> MemoryRecord:
    """A precedent as an AP system writes one: written on the day it was decided (its timestamp), unsigned."""
    words = etype.replace("_", " ")
    return MemoryRecord(
        document_id=doc,
        content=text
        or f"Vendor {vendor} {words} on invoice {doc}. Steel brackets billed above the PO price. Decision: {outcome}.",
        tags=[f"vendor:{vendor}", f"type:{etype}", "kind:decision"],
        metadata={
            "vendor_code": vendor,
            "exception_type": etype,
            "outcome": outcome,
            "decided_on": decided_on,
            "source": "seed",
        },
        timestamp=datetime.fromisoformat(decided_on).replace(tzinfo=UTC),
    )


class FakeRecall:
    """A recall double over a fixed ranking: filters by tags like the server's *_strict modes, counts calls.
    With `facts=n` it answers as an extracting server does: each document as n rewritten facts, its original
    text only in the response's chunks; `observations` are added to every response, as the server adds them."""

    def __init__(
        self, ranking: list[MemoryRecord], facts: int = 1, observations: list[RecalledMemory] = (), sources=None
    ):
        self.ranking, self.facts, self.observations = ranking, facts, list(observations)
        self.sources = dict(sources or {})
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def __call__(self, bank_id, query, *, tags, tags_match, max_tokens, budget="mid", types=None):
        self.calls.append((tags_match, tuple(tags or ())))
        want = set(tags or ())

        def matches(have: set[str]) -> bool:  # *_strict: untagged records never match
            return bool(have) and (
                (tags_match == "all_strict" and want <= have) or (tags_match == "any_strict" and bool(want & have))
            )

        hits, chunks = [], {}
        for r in (r for r in self.ranking if matches(set(r.tags))):
            chunk = f"{bank_id}_{r.document_id}_0"
            chunks[chunk] = Chunk(id=chunk, text=r.content)
            for n in range(self.facts):
                text = r.content if self.facts == 1 else f"Fact {n} of {r.document_id}, as rewritten"
                hits.append(
                    RecalledMemory(
                        id=f"m-{r.document_id}-{n}",
                        text=text,
                        tags=r.tags,
                        document_id=r.document_id,
                        chunk_id=chunk,
                        metadata=r.metadata,
                        mentioned_at=r.timestamp.isoformat() if r.timestamp else None,
                    )
                )
        observations = [o for o in self.observations if matches(set(o.tags))]
        return RecallResponse(results=hits + observations, chunks=chunks, source_facts=self.sources)


CROWD_QUERY = "steel brackets billed above the PO price"


def crowding_records(vendor: str = "VA", other: str = "VB", etype: str = "price_variance") -> list[MemoryRecord]:
    """Two precedents of `vendor` worded unlike CROWD_QUERY, and twelve near-identical ones of `other`
    (same type) worded like it: one any_strict pass for `vendor` fills its top k with `other`'s records."""
    mine = [
        precedent(
            f"PREC-{vendor}-{i}",
            vendor,
            etype,
            "reject",
            f"2025-05-0{i + 1}",
            text=f"Alpha Tools order {i}: brackets charged above the agreed contract rate. Decision: reject.",
        )
        for i in range(2)
    ]
    theirs = [
        precedent(
            f"PREC-{other}-{i:02d}",
            other,
            etype,
            "approve",
            f"2025-07-{i + 1:02d}",
            text=f"Vendor {other}: steel brackets billed above the PO price, invoice {i}. Decision: approve.",
        )
        for i in range(12)
    ]
    return mine + theirs

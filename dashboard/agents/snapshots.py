"""Compact, text-free views of recalled documents and recall calls, shared by agent runs and the audit sync.

A document's owner (support) is read from its customer tag, else from the legacy marker its original text
starts with; a document with neither has no provable owner. No Streamlit here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from dashboard.finance.models import REVIEWER_TAG
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import RecalledDocument, RecalledObservation, group
from dashboard.hindsight.wire import RecallResponse
from dashboard.store.agent_runs import RecallSnapshot, ResultRef
from dashboard.support.admission import leading_marker_name, whose
from dashboard.support.customers import TAG_PREFIX, customer_tag
from dashboard.trust.origin import OriginOf

KEPT_METADATA = (
    "outcome",
    "decided_on",
    "decided_at",
    "source",
    "vendor_code",
    "exception_type",
    "reviewer",
    "exception_id",
    "customer",
    "ticket_id",
    "overridden",
)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def response_hash(texts: Iterable[str]) -> str:
    return hashlib.sha256("\x1e".join(texts).encode()).hexdigest()


def result_ref(record: RecalledDocument | RecalledObservation, origin: OriginOf | None = None) -> ResultRef:
    """A recalled document's or observation's compact ref. A document's owner is its customer tag, else the
    customer its ORIGINAL text's leading marker names (never a rewritten fact's); an observation's is its tag.
    `origin`: the check of a record's signature, so the ref says who wrote it (the signature itself is not kept)."""
    if isinstance(record, RecalledObservation):
        return ResultRef(
            id=record.ref,
            kind="observation",
            tags=list(record.tags),
            score=record.memory.scores.final,
            text_hash=text_hash(record.text),
            owner=_owner(record.tags, None, None),
            sources=record.source_documents,
        )
    ref = _document_ref(
        record.ref,
        record.document_id,
        record.tags,
        record.text,
        record.first_chunk,
        record.metadata,
        score=record.scores.final,
        facts=len(record.facts),
    )
    if origin is None:
        return ref
    return ref.model_copy(update={"origin": origin(record.document_id, record.tags, record.metadata).words})


def evidence_ref(row, origin: OriginOf | None = None) -> ResultRef:
    """A page's evidence row (PrecedentEvidence, TicketEvidence): a document, its text the original; or (support) an
    observation, with the documents it came from. `origin`: the check of a record's signature (who wrote it)."""
    text = row.text if getattr(row, "verbatim", True) else None
    metadata = getattr(row, "metadata", None) or {}
    ref = _document_ref(row.id, row.document_id, row.tags, row.text, text, metadata)
    if origin is not None and getattr(row, "kind", "document") != "observation":
        ref = ref.model_copy(update={"origin": origin(row.document_id, row.tags, metadata).words})
    if getattr(row, "kind", "document") != "observation":
        return ref
    sources = dict.fromkeys(s.document_id for s in row.sources if s.document_id)
    return ref.model_copy(update={"kind": "observation", "sources": list(sources)})


def _document_ref(ref, document_id, tags, text, original_start, metadata, *, score=None, facts=1) -> ResultRef:
    named = leading_marker_name(original_start) if original_start is not None else None
    return ResultRef(
        id=ref,
        document_id=document_id,
        facts=facts,
        tags=list(tags),
        score=score,
        text_hash=text_hash(text),
        owner=_owner(tags, named, original_start),
        marker_name=named,
        metadata={k: v for k, v in metadata.items() if k in KEPT_METADATA},
    )


def _owner(tags: list[str], marker_name: str | None, original_start: str | None) -> str | None:
    """The customer tag, else (untagged only) the tag of the customer the leading marker names, when the one ownership
    rule (admission.whose) gives the record to that customer."""
    tagged = next((t for t in tags if t.startswith(TAG_PREFIX)), None)
    if tagged is not None or tags or marker_name is None:
        return tagged
    try:
        return customer_tag(marker_name) if whose(original_start, tags, marker_name) is not None else None
    except ValueError:
        return None


def result_refs(response: RecallResponse, origin: OriginOf | None = None) -> list[ResultRef]:
    """What a recall returned, per document (best first), then its observations."""
    grouped = group(response)
    return [result_ref(d, origin) for d in grouped.documents] + [result_ref(o) for o in grouped.observations]


def label_for(tags: list[str] | None, tags_match: str | None, exact_label: str = "exact") -> str:
    if not tags:
        return "bank_wide"
    if REVIEWER_TAG in tags:
        return "decisions"
    if tags_match == "all_strict":
        return exact_label
    if any(t.startswith(TAG_PREFIX) for t in tags):
        return "tagged"
    return "broader"


class RecordingRecall:
    """Wraps a RecallFn and keeps a snapshot of every call it makes, in order (`origin`: each record's writer too)."""

    def __init__(
        self,
        recall: RecallFn,
        label: Callable[[list[str] | None, str | None], str] = label_for,
        origin: OriginOf | None = None,
    ):
        self._recall, self._label, self._origin = recall, label, origin
        self.snapshots: list[RecallSnapshot] = []

    def __call__(self, bank_id: str, query: str, **kwargs) -> RecallResponse:
        response = self._recall(bank_id, query, **kwargs)
        tags, mode = kwargs.get("tags"), kwargs.get("tags_match", "any")
        self.snapshots.append(
            RecallSnapshot(
                label=self._label(tags, mode),
                query=query,
                tags=list(tags or []),
                tags_match=mode,
                max_tokens=kwargs.get("max_tokens"),
                budget=kwargs.get("budget"),
                results=result_refs(response, self._origin),
            )
        )
        return response

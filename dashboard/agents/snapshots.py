"""Compact, text-free views of recalled records and recall calls, shared by agent runs and the audit sync.

A record's owner (support) is read from its customer tag, else from a leading legacy marker; a record
with neither has no provable owner. No Streamlit here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from dashboard.finance.models import REVIEWER_TAG
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.wire import RecalledMemory, RecallResponse
from dashboard.review.agent_runs import RecallSnapshot, ResultRef
from dashboard.support.admission import leading_marker_name
from dashboard.support.customers import TAG_PREFIX, customer_tag

KEPT_METADATA = (
    "outcome", "decided_on", "decided_at", "source", "vendor_code", "exception_type", "reviewer", "exception_id",
    "customer", "ticket_id", "overridden",
)  # fmt: skip


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def response_hash(texts: Iterable[str]) -> str:
    return hashlib.sha256("\x1e".join(texts).encode()).hexdigest()


def result_ref(memory: RecalledMemory) -> ResultRef:
    """Also takes a page's evidence rows (PrecedentEvidence, TicketEvidence): same id, text and tags."""
    metadata, scores = getattr(memory, "metadata", None) or {}, getattr(memory, "scores", None)
    owner = next((t for t in memory.tags if t.startswith(TAG_PREFIX)), None)
    named = leading_marker_name(memory.text)
    if owner is None and named is not None and not memory.tags:
        try:
            owner = customer_tag(named)
        except ValueError:
            owner = None
    return ResultRef(
        id=memory.id, document_id=memory.document_id, tags=list(memory.tags), score=scores.final if scores else None,
        text_hash=text_hash(memory.text), owner=owner, marker_name=named,
        metadata={k: v for k, v in metadata.items() if k in KEPT_METADATA},
    )  # fmt: skip


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
    """Wraps a RecallFn and keeps a snapshot of every call it makes, in order."""

    def __init__(self, recall: RecallFn, label: Callable[[list[str] | None, str | None], str] = label_for):
        self._recall, self._label = recall, label
        self.snapshots: list[RecallSnapshot] = []

    def __call__(self, bank_id: str, query: str, **kwargs) -> RecallResponse:
        response = self._recall(bank_id, query, **kwargs)
        tags, mode = kwargs.get("tags"), kwargs.get("tags_match", "any")
        self.snapshots.append(
            RecallSnapshot(
                label=self._label(tags, mode), query=query, tags=list(tags or []), tags_match=mode,
                max_tokens=kwargs.get("max_tokens"), budget=kwargs.get("budget"), results=[result_ref(m) for m in response.results],
            )  # fmt: skip
        )
        return response

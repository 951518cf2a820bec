"""Recall for a support ticket: the customer's tag first, the legacy fallback only when that is empty.

1. Tagged path: recall with `tags=[customer_tag(name)]`, `tags_match="any_strict"` (untagged records
   excluded). If anything comes back, that is the evidence and the fallback does NOT run.
2. Legacy fallback (tagged path empty): a bank-wide recall for the customer's marker + the issue is
   only candidate generation; every candidate is judged by `legacy_admission.judge` (untagged AND the
   customer's marker at the very start). Admitted candidates are evidence; rejected ones are kept,
   with their reasons, for auditors and are never fed to a response.

`recall` is any function shaped like `HindsightGateway.recall`, so tests can pass a double. No Streamlit.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.wire import RecalledMemory
from dashboard.support.admission import Admission, judge, marker, marker_pattern
from dashboard.support.customers import customer_tag

TAGGED_K = 8  # evidence shown and used for a response
LEGACY_CANDIDATES_K = 20  # candidates judged by the ownership rule
MAX_TOKENS = 2048

Path = Literal["tagged", "legacy", "none"]


class TicketEvidence(BaseModel):
    """One recalled record and why it is (or is not) allowed into the ticket."""

    id: str
    document_id: str | None = None
    text: str
    tags: list[str] = Field(default_factory=list)
    admitted: bool
    verdict: str
    reason: str

    @classmethod
    def of(cls, memory: RecalledMemory, admission: Admission) -> TicketEvidence:
        return cls(
            id=memory.id, document_id=memory.document_id, text=memory.text, tags=list(memory.tags),
            admitted=admission.admitted, verdict=admission.verdict.value, reason=admission.reason,
        )  # fmt: skip


class RecallRequest(BaseModel):
    """A recall exactly as it was sent (what a trace link needs)."""

    query: str
    tags: list[str] = Field(default_factory=list)
    tags_match: str = "any"
    max_tokens: int = MAX_TOKENS


class TicketRecall(BaseModel):
    customer: str
    tag: str
    path: Path
    tagged: list[TicketEvidence] = Field(default_factory=list)
    legacy_admitted: list[TicketEvidence] = Field(default_factory=list)
    legacy_rejected: list[TicketEvidence] = Field(default_factory=list)
    requests: list[RecallRequest] = Field(default_factory=list)

    @property
    def evidence(self) -> list[TicketEvidence]:
        """What may reach the response: tagged evidence, or the admitted legacy records. Never rejected ones."""
        return self.tagged if self.path == "tagged" else self.legacy_admitted

    def as_json(self) -> dict:
        return {
            "customer": self.customer,
            "tag": self.tag,
            "path": self.path,
            "tagged": [e.model_dump(include={"id", "document_id", "text", "tags", "reason"}) for e in self.tagged],
            "legacy_admitted": [e.model_dump(include={"id", "document_id", "text", "reason"}) for e in self.legacy_admitted],
            "legacy_rejected": [
                e.model_dump(include={"id", "document_id", "tags", "verdict", "reason"}) for e in self.legacy_rejected
            ],
        }


def tagged_query(issue: str) -> str:
    # No "Label:" prefix: Hindsight 1.1.0's temporal analyser fails on that shape.
    return f"previous support issues, resolutions and preferences related to {issue.strip()}"


def legacy_query(customer: str, issue: str) -> str:
    return f"{marker(customer)} {issue.strip()}"


def recall_for_ticket(
    recall: RecallFn, bank_id: str, customer: str, issue: str,
    *, tagged_k: int = TAGGED_K, candidates_k: int = LEGACY_CANDIDATES_K,
) -> TicketRecall:  # fmt: skip
    if not issue.strip():
        raise ValueError("issue must not be empty")
    marker_pattern(customer)  # refuses empty / ambiguous names before anything is sent
    tag = customer_tag(customer)
    name = " ".join(customer.split())

    first = RecallRequest(query=tagged_query(issue), tags=[tag], tags_match="any_strict")
    tagged = recall(bank_id, first.query, tags=first.tags, tags_match="any_strict", max_tokens=MAX_TOKENS)
    # any_strict already excludes untagged records; the local check only guards against a server change.
    own = [m for m in tagged.results if tag in m.tags][:tagged_k]
    if own:
        evidence = [
            TicketEvidence.of(m, Admission(verdict="admitted", reason=f"tagged for this customer ({tag})")) for m in own
        ]
        return TicketRecall(customer=name, tag=tag, path="tagged", tagged=evidence, requests=[first])

    second = RecallRequest(query=legacy_query(customer, issue))
    candidates = recall(bank_id, second.query, max_tokens=MAX_TOKENS).results[:candidates_k]
    admitted, rejected = [], []
    for memory in candidates:
        item = TicketEvidence.of(memory, judge(memory.text, memory.tags, customer))
        (admitted if item.admitted else rejected).append(item)
    return TicketRecall(
        customer=name, tag=tag, path="legacy" if admitted else "none",
        legacy_admitted=admitted, legacy_rejected=rejected, requests=[first, second],
    )  # fmt: skip

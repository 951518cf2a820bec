"""Recall for a support ticket: the customer's tag first, the legacy fallback only when that is empty.

Every result is judged as a document (hindsight.documents): with an LLM the server returns several
rewritten facts per document, and only the document's ORIGINAL text (its first chunk) can carry the
legacy marker.

1. Tagged path: recall with `tags=[customer_tag(name)]`, `tags_match="any_strict"` (untagged records
   excluded). If a document tagged for the customer comes back, that is the evidence and the fallback
   does NOT run. An observation returned there is used only when every document it was consolidated
   from is the customer's; one that mixes in another customer's (or an unproven untagged) record is
   excluded, with the documents named.
2. Legacy fallback (no tagged document): a bank-wide recall for the customer's marker + the issue is
   only candidate generation; every candidate document is judged by `admission.judge_document` on its
   original text (untagged AND the customer's marker at the very start; unreadable text is rejected).
   Observations are never admitted. Rejected candidates are kept, with their reasons, for auditors and
   are never fed to a response.

`recall` is any function shaped like `HindsightGateway.recall`, `read_document` like
`HindsightGateway.document` (the original text of a document the response did not hold), so tests can
pass doubles. No Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import RecalledDocument, RecalledObservation, recall_documents
from dashboard.hindsight.wire import StoredDocument
from dashboard.support.admission import (
    OWNERSHIP_WORDS,
    Admission,
    Ownership,
    Verdict,
    judge_document,
    judge_observation,
    marker,
    marker_pattern,
    observation_on_legacy_path,
    owns,
    whose,
)
from dashboard.support.customers import customer_tag, display_name
from dashboard.trust.screen import Flag, screen, screen_record

TAGGED_K = 8  # documents shown and used for a response
LEGACY_CANDIDATES_K = 20  # candidate documents judged by the ownership rule
MAX_TOKENS = 2048
MAX_TOKENS_CAP = 8 * MAX_TOKENS  # how far a recall's budget may grow to hold its documents

Path = Literal["tagged", "legacy", "none"]
ReadDocument = Callable[[str, str], StoredDocument | None]  # (bank, document id) -> the stored document


class SourceCheck(BaseModel):
    """One source fact of an observation, and whether its document is proven the customer's."""

    fact_id: str
    fact: str  # the fact's text, as the server rewrote it
    document_id: str | None = None
    tags: list[str] = Field(default_factory=list)
    owned: bool
    reason: str


class TicketEvidence(BaseModel):
    """One recalled document (or observation) and why it is (or is not) allowed into the ticket."""

    id: str  # the document id; an observation's memory id
    kind: Literal["document", "observation"] = "document"
    document_id: str | None = None
    text: str  # the document's original text; an observation's own text
    verbatim: bool = True  # `text` is the original (not rebuilt from facts)
    facts: list[str] = Field(default_factory=list)  # the matched facts, as rewritten by the server (beside the text)
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)  # as written: proves nothing unless signed (trust/origin.py)
    written_at: str | None = None  # when the writer said it was written (its facts' mentioned_at): the burst window
    admitted: bool
    verdict: str
    reason: str
    sources: list[SourceCheck] = Field(default_factory=list)  # an observation's provenance
    flags: list[Flag] = Field(
        default_factory=list
    )  # what its text says to the agent (trust/screen.py), whatever admitted it

    @property
    def ref(self) -> str:
        return self.id

    @classmethod
    def of_document(cls, document: RecalledDocument, admission: Admission) -> TicketEvidence:
        return cls(
            id=document.ref,
            document_id=document.document_id,
            text=document.text,
            verbatim=document.verbatim,
            facts=[f.text for f in document.extracted_facts],
            tags=list(document.tags),
            metadata=dict(document.metadata),
            admitted=admission.admitted,
            verdict=admission.verdict.value,
            reason=admission.reason,
            flags=screen_record(
                document.text,
                context=document.facts[0].context,
                metadata=document.metadata,
                tags=document.tags,
                document_id=document.document_id,
            ),
            written_at=document.facts[0].mentioned_at,
        )

    @classmethod
    def of_observation(
        cls, observation: RecalledObservation, admission: Admission, sources: list[SourceCheck]
    ) -> TicketEvidence:
        return cls(
            id=observation.ref,
            kind="observation",
            text=observation.text,
            tags=list(observation.tags),
            admitted=admission.verdict is Verdict.OBSERVATION_OWN,
            verdict=admission.verdict.value,
            reason=admission.reason,
            sources=sources,
            flags=screen(observation.text),
        )


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
    tagged: list[TicketEvidence] = Field(default_factory=list)  # documents tagged for the customer
    legacy_admitted: list[TicketEvidence] = Field(default_factory=list)
    legacy_rejected: list[TicketEvidence] = Field(default_factory=list)  # documents and observations
    observations: list[TicketEvidence] = Field(default_factory=list)  # the tagged path's, each with its verdict
    requests: list[RecallRequest] = Field(default_factory=list)

    @property
    def evidence(self) -> list[TicketEvidence]:
        """What may reach the response: tagged documents, or the admitted legacy documents. Never rejected ones."""
        return self.tagged if self.path == "tagged" else self.legacy_admitted

    @property
    def mixing_observations(self) -> list[TicketEvidence]:
        """Observations the tagged recall returned that carry another customer's (or unproven) records: excluded."""
        return [o for o in self.observations if o.verdict == Verdict.OBSERVATION_MIXES.value]

    def as_json(self) -> dict:
        keep = {"id", "kind", "document_id", "text", "facts", "tags", "verdict", "reason"}
        return {
            "customer": self.customer,
            "tag": self.tag,
            "path": self.path,
            "tagged": [e.model_dump(include=keep) for e in self.tagged],
            "legacy_admitted": [e.model_dump(include=keep) for e in self.legacy_admitted],
            "legacy_rejected": [e.model_dump(include=keep - {"text", "facts"}) for e in self.legacy_rejected],
            "observations": [e.model_dump(include=keep | {"sources"}) for e in self.observations],
        }


def tagged_query(issue: str) -> str:
    # No "Label:" prefix: Hindsight 1.1.0's temporal analyser fails on that shape.
    return f"previous support issues, resolutions and preferences related to {issue.strip()}"


def legacy_query(customer: str, issue: str) -> str:
    return f"{marker(customer)} {issue.strip()}"


class _OriginalTexts:
    """The original start (first chunk) of documents: from the response when it holds chunk 0, else read from
    the server once per document; None when it cannot be read."""

    def __init__(self, bank_id: str, read_document: ReadDocument | None):
        self.bank_id, self.read_document = bank_id, read_document
        self.known: dict[str, str | None] = {}

    def start_of(self, document_id: str | None, first_chunk: str | None = None) -> str | None:
        if first_chunk is not None or not document_id:
            return first_chunk
        if document_id not in self.known:
            stored = self.read_document(self.bank_id, document_id) if self.read_document else None
            self.known[document_id] = stored.original_text if stored is not None else None
        return self.known[document_id]

    def learn(self, documents: list[RecalledDocument]) -> None:
        for d in documents:
            if d.document_id and d.first_chunk is not None:
                self.known.setdefault(d.document_id, d.first_chunk)


def _judge_sources(observation: RecalledObservation, customer: str, texts: _OriginalTexts) -> list[SourceCheck]:
    checks = []
    for fact in observation.sources:
        admission = judge_document(texts.start_of(fact.document_id), fact.tags, customer)
        checks.append(
            SourceCheck(
                fact_id=fact.id,
                fact=fact.text,
                document_id=fact.document_id,
                tags=list(fact.tags),
                owned=owns(admission),
                reason=admission.reason,
            )
        )
    return checks


def _observation(observation: RecalledObservation, customer: str, texts: _OriginalTexts) -> TicketEvidence:
    checks = _judge_sources(observation, customer, texts)
    owned = [(c.document_id or c.fact_id, c.owned) for c in checks]
    return TicketEvidence.of_observation(
        observation, judge_observation(owned, len(observation.unresolved), customer), checks
    )


def check_observations(
    bank_id: str, customer: str, observations: list[RecalledObservation], read_document: ReadDocument | None = None
) -> list[TicketEvidence]:
    """Each observation of a tagged recall with its verdict: used only when every source is `customer`'s."""
    texts = _OriginalTexts(bank_id, read_document)
    return [_observation(o, customer, texts) for o in observations]


def customers_records(
    bank_id: str,
    customer: str,
    documents: Iterable[tuple[str, Sequence[str]]],
    read_document: ReadDocument | None,
) -> dict[str, Ownership]:
    """Which of these (document id, tags) are `customer`'s, and how (admission.whose): what a trace opened from a
    ticket stars. Only an untagged document's original text is read (a tag decides on its own), once per document."""
    texts = _OriginalTexts(bank_id, read_document)
    owned = {}
    for document_id, tags in documents:
        how = whose(None if tags else texts.start_of(document_id), tuple(tags), customer)
        if how is not None:
            owned[document_id] = how
    return owned


def ownership_sentence(
    bank_id: str, customer: str, document_id: str, tags: Sequence[str], read_document: ReadDocument | None
) -> str:
    """One document judged as the ticket's page judges it (admission.whose), in a sentence: whose it is and how."""
    start = None if tags else _OriginalTexts(bank_id, read_document).start_of(document_id)
    how, name = whose(start, tuple(tags), customer), display_name(customer)
    if how is not None:
        return f"{document_id} is {name}'s own record, {OWNERSHIP_WORDS[how]}."
    return f"{document_id} is not {name}'s record by the ticket's rule: {judge_document(start, tuple(tags), customer).reason}."


def recall_for_ticket(
    recall: RecallFn,
    bank_id: str,
    customer: str,
    issue: str,
    *,
    tagged_k: int = TAGGED_K,
    candidates_k: int = LEGACY_CANDIDATES_K,
    read_document: ReadDocument | None = None,
) -> TicketRecall:
    if not issue.strip():
        raise ValueError("issue must not be empty")
    marker_pattern(customer)  # refuses empty / ambiguous names before anything is sent
    tag = customer_tag(customer)
    name = display_name(customer)
    texts = _OriginalTexts(bank_id, read_document)

    tagged, tokens = recall_documents(
        recall,
        bank_id,
        tagged_query(issue),
        want=tagged_k,
        max_tokens=MAX_TOKENS,
        cap=MAX_TOKENS_CAP,
        tags=[tag],
        tags_match="any_strict",
    )
    first = RecallRequest(query=tagged_query(issue), tags=[tag], tags_match="any_strict", max_tokens=tokens)
    texts.learn(tagged.documents)
    # any_strict already excludes untagged records; the local check only guards against a server change.
    own = [d for d in tagged.documents if whose(None, d.tags, customer) is Ownership.TAG][:tagged_k]
    if own:
        admitted = Admission(verdict=Verdict.ADMITTED, reason=f"tagged for this customer ({tag})")
        return TicketRecall(
            customer=name,
            tag=tag,
            path="tagged",
            tagged=[TicketEvidence.of_document(d, admitted) for d in own],
            observations=[_observation(o, customer, texts) for o in tagged.observations],
            requests=[first],
        )

    candidates, tokens = recall_documents(
        recall, bank_id, legacy_query(customer, issue), want=candidates_k, max_tokens=MAX_TOKENS, cap=MAX_TOKENS_CAP
    )
    second = RecallRequest(query=legacy_query(customer, issue), max_tokens=tokens)
    texts.learn(candidates.documents)
    admitted, rejected = [], []
    for document in candidates.documents[:candidates_k]:
        verdict = judge_document(texts.start_of(document.document_id, document.first_chunk), document.tags, customer)
        item = TicketEvidence.of_document(document, verdict)
        (admitted if item.admitted else rejected).append(item)
    rejected += [TicketEvidence.of_observation(o, observation_on_legacy_path(), []) for o in candidates.observations]
    return TicketRecall(
        customer=name,
        tag=tag,
        path="legacy" if admitted else "none",
        legacy_admitted=admitted,
        legacy_rejected=rejected,
        requests=[first, second],
    )

"""A recall's results as documents: the unit a reviewer reads, counts and cites, in either server mode.

Without an LLM, Hindsight stores each retained text verbatim as one memory. With one, it rewrites each
document into several extracted facts (the original wording gone) and consolidates observations across
documents. A recall returns facts; `group` puts them back together by document id, in the order of each
document's best fact, with the original text of the document's chunks (`include.chunks`, verbatim in
both modes). So k, relevance, votes, citations and ownership are counted and judged per document,
whatever the server did to the text.

Observations belong to no document. They come back apart, with the facts they were consolidated from
(`include.source_facts`), for the domain rules to handle on purpose: an observation is never a
precedent, and it has no original text of its own that could prove whose it is.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from dashboard.hindsight.wire import Chunk, RecalledMemory, RecallResponse, Scores

CHUNK_TOKENS = 8192  # the chunks' budget per recall (the server's default); a cut chunk keeps its start
SOURCE_FACT_TOKENS = 4096  # the observations' source facts per recall (the server's default)


def estimated_tokens(text: str) -> int:
    """A generous estimate of the server's token count (o200k: about 4.5 characters per token in English)."""
    return len(text) // 4 + 1


class RecalledDocument(BaseModel):
    """One retained document as a recall returned it: the facts of it that matched, best first."""

    document_id: str | None  # None only for a memory stored without a document id
    facts: list[RecalledMemory] = Field(min_length=1)
    chunks: list[Chunk] = Field(default_factory=list)  # its chunks the response holds, in document order

    @property
    def ref(self) -> str:
        """How the document is named: its id (a memory id only when it has none)."""
        return self.document_id or self.facts[0].id

    @property
    def tags(self) -> list[str]:
        return self.facts[0].tags  # a document's facts carry the document's tags

    @property
    def metadata(self) -> dict[str, str]:
        return next((f.metadata for f in self.facts if f.metadata), {})

    @property
    def scores(self) -> Scores:
        return self.facts[0].scores

    @property
    def first_chunk(self) -> str | None:
        """The original start of the document (chunk 0), when the response holds it."""
        return next((c.text for c in self.chunks if c.chunk_index == 0), None)

    @property
    def verbatim(self) -> bool:
        """True when `text` is the document's original text (its chunks), not rebuilt from facts."""
        return bool(self.chunks)

    @property
    def cut(self) -> bool:
        """A chunk was cut by the chunks' token budget: the text shown is the start of it."""
        return any(c.truncated for c in self.chunks)

    @property
    def text(self) -> str:
        """The original text (its chunks, in order); without chunks, the facts' texts, one per line."""
        if not self.chunks:
            return "\n".join(f.text for f in self.facts)
        parts, last = [], None
        for chunk in self.chunks:
            if last is not None and chunk.chunk_index != last + 1:
                parts.append("[...]")
            parts.append(chunk.text)
            last = chunk.chunk_index
        return "\n".join(parts)

    @property
    def extracted_facts(self) -> list[RecalledMemory]:
        """The facts worth showing beneath the text: those that are not the text itself (verbatim mode)."""
        return [f for f in self.facts if f.text.strip() != self.text.strip()]


class RecalledObservation(BaseModel):
    """An observation Hindsight consolidated, with the facts it came from (as far as the response resolved them)."""

    memory: RecalledMemory
    sources: list[RecalledMemory] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)  # source fact ids the response left out (its budget ran out)

    @property
    def ref(self) -> str:
        return self.memory.id

    @property
    def text(self) -> str:
        return self.memory.text

    @property
    def tags(self) -> list[str]:
        return self.memory.tags

    @property
    def source_documents(self) -> list[str]:
        """The documents of its source facts, once each, in source order."""
        return list(dict.fromkeys(s.document_id for s in self.sources if s.document_id))


class RecalledDocuments(BaseModel):
    documents: list[RecalledDocument] = Field(default_factory=list)
    observations: list[RecalledObservation] = Field(default_factory=list)
    facts: int = 0  # facts (and observations) the server returned
    budget_reached: bool = False  # the max_tokens budget probably ended the response: lower facts are missing

    def without(self, document_id: str | None) -> RecalledDocuments:
        """These results without one document and without the observations derived from it."""
        if not document_id:
            return self
        return self.model_copy(
            update={
                "documents": [d for d in self.documents if d.document_id != document_id],
                "observations": [o for o in self.observations if document_id not in o.source_documents],
            }
        )


def budget_reached(results: list[RecalledMemory], max_tokens: int | None) -> bool:
    """Did the token budget probably end the response? The server adds facts in rank order while they fit,
    so a response whose texts (plus one more fact like its largest) would overrun the budget was cut."""
    if not max_tokens or not results:
        return False
    sizes = [estimated_tokens(m.text) for m in results]
    return sum(sizes) + max(sizes) > max_tokens


def group(response: RecallResponse, max_tokens: int | None = None) -> RecalledDocuments:
    """The response's facts grouped by document (best fact first) and its observations apart."""
    documents: dict[str, RecalledDocument] = {}
    observations: list[RecalledObservation] = []
    for memory in response.results:
        if memory.is_observation:
            sources = [response.source_facts[i] for i in memory.source_fact_ids if i in response.source_facts]
            missing = [i for i in memory.source_fact_ids if i not in response.source_facts]
            observations.append(RecalledObservation(memory=memory, sources=sources, unresolved=missing))
            continue
        key = memory.document_id or f"memory:{memory.id}"
        if key in documents:
            documents[key].facts.append(memory)
        else:
            documents[key] = RecalledDocument(document_id=memory.document_id, facts=[memory])
    for document in documents.values():
        ids = dict.fromkeys(f.chunk_id for f in document.facts if f.chunk_id)
        found = [response.chunks[i] for i in ids if i in response.chunks]
        document.chunks = sorted(found, key=lambda c: c.chunk_index)
    return RecalledDocuments(
        documents=list(documents.values()),
        observations=observations,
        facts=len(response.results),
        budget_reached=budget_reached(response.results, max_tokens),
    )


def recall_documents(
    recall, bank_id: str, query: str, *, want: int, max_tokens: int, cap: int, **kwargs
) -> tuple[RecalledDocuments, int]:
    """(documents, the budget used): one recall, asked again with twice the budget (up to `cap`) while its
    token budget ended it before `want` documents came back. With an LLM a document is several facts, so
    a budget sized for documents can run out early."""
    while True:
        grouped = group(recall(bank_id, query, max_tokens=max_tokens, **kwargs), max_tokens)
        if len(grouped.documents) >= want or not grouped.budget_reached or max_tokens >= cap:
            return grouped, max_tokens
        max_tokens = min(cap, 2 * max_tokens)

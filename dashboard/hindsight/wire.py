"""Typed models of what goes to Hindsight (a retained record) and what comes back (a recall response
and its trace, `trace=True`), as of Hindsight 1.1.0.

Shapes follow the recorded responses in ../shared/fixtures; unknown fields are ignored so a newer
server does not break parsing, and every field that a server may omit has a default.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dashboard.strict import StrictModel

TagsMatch = Literal["any", "all", "any_strict", "all_strict", "exact"]
Budget = Literal["low", "mid", "high"]
CurationState = Literal["valid", "invalidated"]  # a memory's curation state (PATCH .../memories/{id})
SOURCES = ("semantic", "bm25", "graph", "temporal")
MAX_TAG_LENGTH = 200
ODD_SPACE = re.compile(r"[^\S ]")  # whitespace other than a plain space: tabs, newlines, ...


def tag_value(tags: Iterable[str], prefix: str) -> str | None:
    """The value of the first tag `prefix:value`, e.g. tag_value(["vendor:V06"], "vendor") -> "V06"."""
    head = prefix + ":"
    return next((t.removeprefix(head) for t in tags if t.startswith(head)), None)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Scores(_Model):
    final: float | None = None
    reranker: float | None = None
    semantic: float | None = None
    keyword: float | None = None


class RecalledMemory(_Model):
    """One memory unit: a fact extracted from a document (or, verbatim, the document's text), or an
    observation Hindsight consolidated from several facts (`type == "observation"`, no document)."""

    id: str
    text: str
    type: str | None = None
    tags: list[str] = Field(default_factory=list)
    document_id: str | None = None
    chunk_id: str | None = None  # `<bank>_<document>_<n>`: the chunk of the document it was extracted from
    source_fact_ids: list[str] = Field(default_factory=list)  # an observation's facts (when asked for)
    metadata: dict[str, str] = Field(default_factory=dict)
    context: str | None = None
    mentioned_at: str | None = None
    occurred_start: str | None = None
    occurred_end: str | None = None
    scores: Scores = Field(default_factory=Scores)

    @field_validator("tags", "metadata", "scores", "source_fact_ids", mode="before")
    @classmethod
    def _none_is_empty(cls, value, info):
        # The server sends null for "none" on these fields.
        return (
            {"tags": [], "metadata": {}, "scores": {}, "source_fact_ids": []}[info.field_name]
            if value is None
            else value
        )

    @property
    def is_observation(self) -> bool:
        return self.type == "observation"


class Chunk(_Model):
    """A chunk of a retained document as it was sent: the original text, verbatim (cut when `truncated`)."""

    id: str
    text: str = ""
    chunk_index: int = 0
    truncated: bool = False


class TraceQuery(_Model):
    query_text: str = ""
    timestamp: str | None = None
    budget: int | str | None = None
    max_tokens: int | None = None
    tags: list[str] | None = None
    tags_match: str | None = None
    temporal_constraint: dict | None = None


class RetrievalHit(_Model):
    rank: int
    node_id: str
    text: str = ""
    score: float | None = None
    score_name: str | None = None
    event_date: str | None = None  # the memory's date (recency and temporal proximity are scored from it)


class RetrievalList(_Model):
    method_name: str
    fact_type: str | None = None
    results: list[RetrievalHit] = Field(default_factory=list)
    duration_seconds: float = 0.0
    metadata: dict = Field(default_factory=dict)


class SourceRanks(_Model):
    semantic_rank: int | None = None
    bm25_rank: int | None = None
    graph_rank: int | None = None
    temporal_rank: int | None = None

    def as_dict(self) -> dict[str, int]:
        ranks = {s: getattr(self, f"{s}_rank") for s in SOURCES}
        return {s: r for s, r in ranks.items() if r is not None}


class RrfCandidate(_Model):
    node_id: str
    text: str = ""
    rrf_score: float
    source_ranks: SourceRanks = Field(default_factory=SourceRanks)
    final_rrf_rank: int


class RerankedCandidate(_Model):
    node_id: str
    text: str = ""
    rerank_score: float | None = None
    rerank_rank: int
    rrf_rank: int | None = None
    rank_change: int | None = None
    score_components: dict[str, float | None] = Field(default_factory=dict)


class PhaseMetric(_Model):
    phase_name: str
    duration_seconds: float = 0.0
    details: dict = Field(default_factory=dict)


class TraceSummary(_Model):
    results_returned: int | None = None
    total_duration_seconds: float | None = None
    phase_metrics: list[PhaseMetric] = Field(default_factory=list)

    def phase(self, name: str) -> PhaseMetric | None:
        return next((p for p in self.phase_metrics if p.phase_name == name), None)


class RecallTrace(_Model):
    query: TraceQuery = Field(default_factory=TraceQuery)
    retrieval_results: list[RetrievalList] = Field(default_factory=list)
    rrf_merged: list[RrfCandidate] = Field(default_factory=list)
    reranked: list[RerankedCandidate] = Field(default_factory=list)
    summary: TraceSummary = Field(default_factory=TraceSummary)


class RecallResponse(_Model):
    results: list[RecalledMemory] = Field(default_factory=list)
    trace: RecallTrace | None = None
    chunks: dict[str, Chunk] = Field(default_factory=dict)  # by chunk id, when include.chunks was asked for
    source_facts: dict[str, RecalledMemory] = Field(default_factory=dict)  # observations' facts, by id
    source_facts_truncated: bool = False

    @field_validator("chunks", "source_facts", "source_facts_truncated", mode="before")
    @classmethod
    def _none_is_empty(cls, value, info):
        return ({} if info.field_name != "source_facts_truncated" else False) if value is None else value


class StoredDocument(_Model):
    """A retained document as the server keeps it (GET .../documents/{id})."""

    id: str
    original_text: str | None = None  # None when the bank does not store document text
    content_hash: str | None = None
    tags: list[str] = Field(default_factory=list)
    memory_unit_count: int | None = None
    retain_params: dict = Field(default_factory=dict)  # context, event_date, metadata as retained
    created_at: str | None = None
    updated_at: str | None = None

    @field_validator("tags", "retain_params", mode="before")
    @classmethod
    def _none_is_empty(cls, value, info):
        return ([] if info.field_name == "tags" else {}) if value is None else value


class MemoryRecord(StrictModel):
    """One text retained into Hindsight under its own document id (re-retaining replaces it)."""

    document_id: str = Field(min_length=1, max_length=200)
    content: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    timestamp: datetime | None = None
    context: str | None = None

    @field_validator("tags")
    @classmethod
    def _tags_are_clean(cls, tags: list[str]) -> list[str]:
        for tag in tags:
            if (
                not tag or len(tag) > MAX_TAG_LENGTH or ODD_SPACE.search(tag)
            ):  # a regex: this runs for every stored decision read
                raise ValueError(f"invalid tag {tag!r}: 1-{MAX_TAG_LENGTH} characters, no tabs or newlines")
        return tags

    def as_retain_item(self) -> dict:
        item: dict = {"content": self.content, "document_id": self.document_id, "tags": self.tags}
        if self.metadata:
            item["metadata"] = self.metadata
        if self.timestamp:
            item["timestamp"] = self.timestamp.isoformat()
        if self.context:
            item["context"] = self.context
        return item


class MemoryMode(BaseModel):
    """How a server stores a bank's documents: verbatim (each text as it was sent: no LLM, or the LLM's own
    verbatim mode) or rewritten into extracted facts, and whether it consolidates observations across them."""

    extraction_mode: str  # the server's retain_extraction_mode: chunks (no LLM), verbatim, concise, verbose, custom
    observations: bool

    @classmethod
    def of(cls, config: dict) -> MemoryMode:
        """From a bank's resolved configuration (without an LLM the server forces "chunks", observations off)."""
        return cls(
            extraction_mode=str(config.get("retain_extraction_mode") or "chunks"),
            observations=bool(config.get("enable_observations")),
        )

    @property
    def extracting(self) -> bool:
        return self.extraction_mode not in ("chunks", "verbatim")

    @property
    def label(self) -> str:
        stored = "facts extracted by an LLM" if self.extracting else "texts stored verbatim"
        return f"{stored}, observations {'on' if self.observations else 'off'}"

    @property
    def plain(self) -> str:
        """`label` in a reader's words (the pages'; `label` stays the technical account, shown as a tooltip)."""
        kept = "rewritten into short facts by an AI model" if self.extracting else "each record kept word for word"
        return f"{kept}, {'with' if self.observations else 'no'} summaries across records"

    def as_json(self) -> dict:
        return {
            "mode": "extracting" if self.extracting else "verbatim",
            "extraction_mode": self.extraction_mode,
            "observations": self.observations,
            "label": self.label,
        }

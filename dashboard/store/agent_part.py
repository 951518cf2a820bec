"""What an agent says of a case it hands in (its recommendation, confidence, rationale, citations and the recall it
made): stored with the case, shown beside the dashboard's own recompute. Pydantic only: the API client imports it."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dashboard.strict import StrictModel

MAX_CITED = 100
DocumentId = Annotated[str, Field(min_length=1, max_length=200)]  # as Hindsight keeps one
Tag = Annotated[str, Field(min_length=1, max_length=200)]


class AgentRecall(StrictModel):
    """The recall the agent made for this case: its request and what came back (document ids, best first), or the
    ids of the bank's audit-log entries it wrote."""

    query: str | None = Field(default=None, max_length=5000)
    tags: list[Tag] = Field(default_factory=list, max_length=20)
    tags_match: str | None = Field(default=None, max_length=20)
    document_ids: list[DocumentId] = Field(default_factory=list, max_length=MAX_CITED)
    audit_entry_ids: list[DocumentId] = Field(default_factory=list, max_length=MAX_CITED)


class AgentPart(StrictModel):
    """What the agent that handed the case in said of it: shown on the case page beside the dashboard's own recompute."""

    name: str = Field(min_length=1, max_length=120)
    version: str = Field(default="", max_length=40)
    recommendation: str | None = Field(default=None, max_length=40)  # one of its kind's outcomes
    draft: str | None = Field(default=None, max_length=20_000)  # a kind that drafts (a ticket's reply)
    confidence: float | None = Field(default=None, ge=0, le=1)
    rationale: str = Field(default="", max_length=5000)
    cited: list[DocumentId] = Field(default_factory=list, max_length=MAX_CITED)  # document ids it rests on
    recall: AgentRecall | None = None

"""What identifies a recall so any page can link to its trace, and a small bounded store of fetched traces.

No Streamlit here: `TraceRequest` round-trips through URL query parameters (a deep link), `fetch_trace`
runs the same recall with `trace=True` and stamps it with the time it ran, and `TraceStore` keeps at
most a handful of them (a trace is ~1 MB at 10k memories: never keep them by the hundred).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dashboard.hindsight.wire import Budget, RecallResponse, TagsMatch
from dashboard.traces.labels import CandidateLabel, label_candidates, labels_from_response, missing

FACT_TYPES = ("world", "experience", "observation")
TAGS_MATCH_VALUES: tuple[str, ...] = TagsMatch.__args__
BUDGETS: tuple[str, ...] = Budget.__args__
# What a trace may cost: the pages' own recalls stay below both (finance k=50 asks 15,000 tokens, budget mid).
MAX_TRACE_TOKENS = 16384
TRACE_BUDGETS: tuple[str, ...] = ("low", "mid")

# query parameter names of a deep link (short, stable: other pages build links with them)
P_BANK, P_QUERY, P_TAGS, P_MATCH, P_BUDGET, P_MAX_TOKENS, P_TYPES = (
    "bank",
    "q",
    "tag",
    "match",
    "budget",
    "max_tokens",
    "type",
)


class TraceRequest(BaseModel):
    """One recall, exactly as a page made it (the trace is that request again with trace=True)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bank: str = Field(min_length=1, max_length=200)
    query: str = Field(min_length=1, max_length=4000)
    tags: tuple[str, ...] = ()
    tags_match: TagsMatch = "any"
    budget: Budget = "mid"
    max_tokens: int = Field(default=4096, ge=1, le=MAX_TRACE_TOKENS)
    types: tuple[str, ...] | None = None  # None: the server's default fact types

    @field_validator("budget")
    @classmethod
    def _budget_cap(cls, budget: str) -> str:
        if budget not in TRACE_BUDGETS:
            raise ValueError(f"budget {budget!r} is above what a trace may cost here; use one of {list(TRACE_BUDGETS)}")
        return budget

    @field_validator("types")
    @classmethod
    def _known_types(cls, types: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if types is None:
            return None
        unknown = [t for t in types if t not in FACT_TYPES]
        if unknown:
            raise ValueError(f"unknown fact type(s) {unknown}; expected some of {list(FACT_TYPES)}")
        return tuple(types) or None

    def key(self) -> str:
        """A stable identity (for the store and for widget keys)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True)

    def to_query_params(self) -> dict[str, str | list[str]]:
        """Query parameters of a deep link to this recall's trace (lists repeat the parameter)."""
        params: dict[str, str | list[str]] = {P_BANK: self.bank, P_QUERY: self.query}
        if self.tags:
            params[P_TAGS] = list(self.tags)
        if self.tags_match != "any":
            params[P_MATCH] = self.tags_match
        if self.budget != "mid":
            params[P_BUDGET] = self.budget
        if self.max_tokens != 4096:
            params[P_MAX_TOKENS] = str(self.max_tokens)
        if self.types:
            params[P_TYPES] = list(self.types)
        return params

    @classmethod
    def from_query_params(cls, params: Mapping[str, Any]) -> TraceRequest | None:
        """Parse a deep link. None when it names no recall; ValueError when it names a bad one.

        `params` is `st.query_params.to_dict()`-like (one value per key) or a mapping to lists;
        `get_all` (st.query_params) is used for the repeated keys when it is there.
        """

        def one(name: str) -> str | None:
            value = params.get(name)
            if isinstance(value, list | tuple):
                value = value[-1] if value else None
            return value or None

        def many(name: str) -> tuple[str, ...]:
            if hasattr(params, "get_all"):
                values = params.get_all(name)
            else:
                value = params.get(name)
                values = [] if value is None else list(value) if isinstance(value, list | tuple) else [value]
            return tuple(v for v in values if v)

        bank, query = one(P_BANK), one(P_QUERY)
        if not bank or not query:
            return None
        fields: dict[str, Any] = {"bank": bank, "query": query, "tags": many(P_TAGS)}
        if one(P_MATCH):
            fields["tags_match"] = one(P_MATCH)
        if one(P_BUDGET):
            fields["budget"] = one(P_BUDGET)
        if one(P_MAX_TOKENS):
            fields["max_tokens"] = one(P_MAX_TOKENS)
        fields["types"] = many(P_TYPES) or None
        return cls(**fields)


P_CASE, P_TICKET = "case", "ticket"  # the case a trace link was opened from (the link back to it)
P_OF = "of"  # the kind of that case (QueueKind.key); a link without it: `case` names a finance case, `ticket` a ticket


def kind_of_link(params: Mapping[str, Any]) -> str | None:
    """The kind key a deep link names beside its case (`of`), or None."""
    value = params.get(P_OF)
    if isinstance(value, list | tuple):
        value = value[-1] if value else None
    return value if isinstance(value, str) and 0 < len(value) <= 40 else None


def case_of_link(params: Mapping[str, Any]) -> tuple[str, str] | None:
    """("case", id) or ("ticket", id) when a deep link names the case it was opened from; None otherwise."""
    for kind in (P_CASE, P_TICKET):
        value = params.get(kind)
        if isinstance(value, list | tuple):
            value = value[-1] if value else None
        if value and isinstance(value, str) and len(value) <= 64:
            return kind, value
    return None


def reachable(request: TraceRequest, banks: tuple[str, ...] | list[str]) -> bool:
    """Only the banks this dashboard is configured for can be traced, whatever a link says."""
    return request.bank in banks


class TracedRecall(BaseModel):
    """A recall made again with trace=True, stamped with the time it ran."""

    request: TraceRequest
    fetched_at: datetime
    response: RecallResponse
    labels: dict[str, CandidateLabel] = Field(default_factory=dict)  # memory id -> document id and tags

    def export_json(self) -> str:
        return self.model_dump_json(indent=2)


class _Gateway:  # the methods used (HindsightGateway's), for type hints only
    def recall(self, bank_id: str, query: str, **kwargs: Any) -> RecallResponse: ...

    def list_memories(self, bank_id: str, **kwargs: Any) -> dict: ...


def fetch_trace(gateway: _Gateway, request: TraceRequest, now: Callable[[], datetime] | None = None) -> TracedRecall:
    now = now or (lambda: datetime.now(UTC))
    ran_at = now()
    response = gateway.recall(
        request.bank,
        request.query,
        tags=list(request.tags) or None,
        tags_match=request.tags_match,
        budget=request.budget,
        max_tokens=request.max_tokens,
        trace=True,
        types=list(request.types) if request.types else None,
    )
    labels = labels_from_response(response)
    if missing(response, labels):  # name the candidates that were not returned: list the pool the recall drew from
        tags = list(request.tags) or None

        def list_page(limit: int, offset: int) -> dict:
            return gateway.list_memories(
                request.bank, tags=tags, tags_match=request.tags_match if tags else None, limit=limit, offset=offset
            )

        labels = label_candidates(response, list_page)
    return TracedRecall(request=request, fetched_at=ran_at, response=response, labels=labels)


class TraceStore:
    """Least-recently-used store of at most `capacity` traces."""

    def __init__(self, capacity: int = 5):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._items: OrderedDict[str, TracedRecall] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, request: TraceRequest) -> bool:
        return request.key() in self._items

    def get(self, request: TraceRequest) -> TracedRecall | None:
        item = self._items.get(request.key())
        if item is not None:
            self._items.move_to_end(request.key())
        return item

    def put(self, traced: TracedRecall) -> None:
        key = traced.request.key()
        self._items[key] = traced
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def requests(self) -> list[TraceRequest]:
        """Most recent first."""
        return [t.request for t in reversed(self._items.values())]

    def get_or_fetch(self, gateway: _Gateway, request: TraceRequest, refresh: bool = False) -> TracedRecall:
        cached = None if refresh else self.get(request)
        if cached is not None:
            return cached
        traced = fetch_trace(gateway, request)
        self.put(traced)
        return traced

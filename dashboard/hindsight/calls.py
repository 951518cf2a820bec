"""The call shapes the core depends on: HindsightGateway.recall/arecall/retain, or a test double.

The domain rooms take these as parameters instead of importing the gateway, so their rules stay
plain functions that a test can drive with a double and the app drives with the real server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Protocol

from dashboard.hindsight.wire import Budget, CurationState, MemoryRecord, RecallResponse, TagsMatch


class RecallFn(Protocol):
    def __call__(
        self,
        bank_id: str,
        query: str,
        *,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        max_tokens: int = 4096,
        budget: Budget = "mid",
        types: list[str] | None = None,
    ) -> RecallResponse: ...


class AsyncRecallFn(Protocol):
    """A coroutine on the gateway's loop (HindsightGateway.arecall), same keyword arguments."""

    def __call__(
        self,
        bank_id: str,
        query: str,
        *,
        tags: list[str] | None = None,
        tags_match: TagsMatch = "any",
        max_tokens: int = 4096,
        budget: Budget = "mid",
        types: list[str] | None = None,
    ) -> Awaitable[RecallResponse]: ...


class RetainFn(Protocol):
    def __call__(self, bank_id: str, records: Sequence[MemoryRecord]) -> object: ...


class CurateFn(Protocol):
    """HindsightGateway.set_document_state: every memory of a document to `state`; returns how many changed."""

    def __call__(self, bank_id: str, document_id: str, state: CurationState, reason: str | None = None) -> object: ...

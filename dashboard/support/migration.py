"""Measured migration of untagged (legacy) support records to customer tags. No Streamlit.

1. Read the bank once: its untagged records with `list_memories(tags=[], tags_match="exact")`
   (checked on 1.1.0: only untagged memories match), paged, and its memory count. A tagged record in
   that listing means the filter changed meaning: `MigrationError`, nothing is written.
2. Classify each against the customer directory with the SAME ownership rule as the live fallback
   (`legacy_admission`): reliable identity = the text starts with a marker that names exactly one
   directory customer; otherwise failed validation (no marker, marker not at the start, unknown
   customer, ambiguous customer, a document stored as several memories).
3. Dry run: counts, per-record reasons and coverage; nothing is written.
4. Apply: for each reliable record, re-retain the SAME document id with the same text, its original
   time and context, the customer's tag and migration metadata. Hindsight's `document_id` + replace
   semantics swap the untagged memory for the tagged one in place: no duplicate, and running again
   (or after a crash halfway) only converts what is still untagged. The result is deterministic (no
   wall-clock values are written), so a resumed run ends exactly where a clean run does.
5. Coverage before/after and a readiness flag: the fallback can be retired when no convertible
   legacy record is left. Apply reads the bank twice: once to plan, once to measure after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.wire import MemoryRecord
from dashboard.support.admission import has_marker_at_start, leading_marker_name, marker_position
from dashboard.support.customers import customer_tag
from dashboard.support.directory import check_directory
from dashboard.support.models import Customer

PAGE = 500
DEFAULT_BATCH = 10
MIGRATED_FROM = "untagged-legacy"


class StoredMemory(BaseModel):
    id: str
    document_id: str | None = None
    text: str
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    context: str | None = None
    mentioned_at: str | None = None


class Classification(BaseModel):
    document_id: str | None
    memory_id: str
    status: Literal["reliable", "failed"]
    customer: str | None = None
    tag: str | None = None
    reason: str
    text: str


class Coverage(BaseModel):
    total: int
    tagged: int
    untagged: int
    convertible: int  # untagged with a reliable identity: what apply would convert

    @property
    def tagged_share(self) -> float:
        return round(self.tagged / self.total, 4) if self.total else 1.0

    @property
    def ready_to_retire_fallback(self) -> bool:
        return self.convertible == 0

    def as_json(self) -> dict:
        return {**self.model_dump(), "tagged_share": self.tagged_share, "ready_to_retire_fallback": self.ready_to_retire_fallback}


class MigrationPlan(BaseModel):
    bank_id: str
    coverage: Coverage
    reliable: list[Classification] = Field(default_factory=list)
    failed: list[Classification] = Field(default_factory=list)
    directory_problems: list[str] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"untagged": self.coverage.untagged, "reliable": len(self.reliable), "failed": len(self.failed)}


class MigrationReport(BaseModel):
    bank_id: str
    before: Coverage
    after: Coverage
    converted: list[str] = Field(default_factory=list)  # document ids
    remaining_reliable: int = 0
    error: str | None = None
    scope: str | None = None  # None: the whole bank; otherwise what `only` selected, e.g. "Ann Lee's records"
    selected_before: int | None = None  # reliable records in scope before the run, and after it
    selected_after: int | None = None


class MigrationError(Exception):
    """The migration cannot go on safely; the message says why (for a person, no traceback needed)."""


class DirectoryError(MigrationError, ValueError):
    """The customer directory is not safe to migrate against (shared tags, unusable names)."""


def _page_through(fetch: Callable[[int, int], dict]) -> list[dict]:
    items, offset = [], 0
    while True:
        page = fetch(PAGE, offset)
        batch = page.get("items", [])
        items.extend(batch)
        offset += PAGE
        if not batch or offset >= page.get("total", 0):
            return items


def untagged_memories(gateway, bank_id: str) -> list[StoredMemory]:
    """The bank's untagged memories, filtered by the server; MigrationError if it returns a tagged one
    (re-retaining it would replace its tags)."""
    raw = _page_through(lambda limit, offset: gateway.list_memories(bank_id, tags=[], tags_match="exact", limit=limit, offset=offset))
    tagged = [item.get("document_id") or item["id"] for item in raw if item.get("tags")]
    if tagged:
        raise MigrationError(
            f"Hindsight's untagged filter (tags=[], tags_match='exact') returned {len(tagged)} tagged memories "
            f"(e.g. {', '.join(map(str, tagged[:3]))}): the filter no longer means 'untagged', so the migration stops"
        )
    return [StoredMemory.model_validate(_clean(item)) for item in raw]


def _clean(item: dict) -> dict:
    return {
        "id": item["id"], "document_id": item.get("document_id"), "text": item.get("text") or "",
        "tags": item.get("tags") or [], "metadata": item.get("metadata") or {}, "context": item.get("context") or None,
        "mentioned_at": item.get("mentioned_at"),
    }  # fmt: skip


def classify(memory: StoredMemory, customers: Sequence[Customer], chunks_in_document: int = 1) -> Classification:
    base = {"document_id": memory.document_id, "memory_id": memory.id, "text": memory.text}
    if not memory.document_id:
        return Classification(**base, status="failed", reason="no document id: cannot be replaced in place")
    if chunks_in_document > 1:
        return Classification(
            **base, status="failed",
            reason=f"the document is stored as {chunks_in_document} memories: cannot be rebuilt verbatim",
        )  # fmt: skip
    named = leading_marker_name(memory.text)
    if named is None:
        inner = marker_position(memory.text)
        reason = (
            f"marker not at the start (at character {inner}): ownership not proven"
            if inner is not None else "no 'Customer <name> contacted support.' marker (e.g. a summary)"
        )  # fmt: skip
        return Classification(**base, status="failed", reason=reason)
    owners = [c.name for c in customers if has_marker_at_start(memory.text, c.name)]
    if not owners:
        return Classification(**base, status="failed", reason=f"unknown customer: the marker names '{named}', who is not in the directory")
    if len(owners) > 1:
        return Classification(**base, status="failed", reason=f"ambiguous customer: the marker matches {', '.join(owners)}")
    owner = owners[0]
    return Classification(
        **base, status="reliable", customer=owner, tag=customer_tag(owner),
        reason=f"the marker names exactly one directory customer: {owner}",
    )  # fmt: skip


def plan(gateway, bank_id: str, customers: Sequence[Customer]) -> MigrationPlan:
    """The dry run: reads the bank once, writes nothing."""
    return _plan(bank_id, _memory_count(gateway, bank_id), untagged_memories(gateway, bank_id), customers)


def _memory_count(gateway, bank_id: str) -> int:
    return int(gateway.list_memories(bank_id, limit=1).get("total", 0))


def _plan(bank_id: str, total: int, untagged: list[StoredMemory], customers: Sequence[Customer]) -> MigrationPlan:
    # A document's memories share its tags: counting the untagged ones finds every split document.
    per_document: dict[str | None, int] = {}
    for m in untagged:
        per_document[m.document_id] = per_document.get(m.document_id, 0) + 1
    problems = check_directory(customers)
    usable = [] if problems else customers
    results = [classify(m, usable, per_document.get(m.document_id, 1)) for m in untagged]
    reliable = sorted((c for c in results if c.status == "reliable"), key=lambda c: c.document_id or "")
    failed = sorted((c for c in results if c.status == "failed"), key=lambda c: c.document_id or "")
    if problems:
        for c in failed:
            c.reason = "directory is not safe to migrate against: " + "; ".join(problems)
    coverage = Coverage(total=total, tagged=total - len(untagged), untagged=len(untagged), convertible=len(reliable))
    return MigrationPlan(bank_id=bank_id, coverage=coverage, reliable=reliable, failed=failed, directory_problems=problems)


def replacement(memory: StoredMemory, classification: Classification) -> MemoryRecord:
    """The tagged record that replaces an untagged one: same document id, same text, time and context."""
    timestamp = None
    if memory.mentioned_at:
        try:
            timestamp = datetime.fromisoformat(memory.mentioned_at)
        except ValueError:
            timestamp = None
    return MemoryRecord(
        document_id=classification.document_id,
        content=memory.text,
        tags=[classification.tag],
        metadata={**memory.metadata, "kind": "interaction", "customer": classification.customer, "migrated_from": MIGRATED_FROM},
        timestamp=timestamp,
        context=memory.context,
    )


def apply(
    gateway, bank_id: str, customers: Sequence[Customer], *, batch_size: int = DEFAULT_BATCH, limit: int | None = None,
    retain: Callable[[str, list[MemoryRecord]], object] | None = None,
    only: Callable[[Classification], bool] | None = None, scope: str | None = None,
) -> MigrationReport:  # fmt: skip
    """Convert reliable untagged records in batches; stops cleanly at `limit` records or at the first failure.

    `only` narrows the run to the reliable records it selects (one customer, one record), `scope` names
    that selection in the report. Safe to run again at any time: it re-plans from what the server
    holds, so converted records are no longer untagged and are not touched twice.
    """
    selected = only or (lambda _c: True)
    retain = retain or gateway.retain
    untagged = untagged_memories(gateway, bank_id)
    before = _plan(bank_id, _memory_count(gateway, bank_id), untagged, customers)
    if before.directory_problems:
        raise DirectoryError("; ".join(before.directory_problems))
    memories = {m.id: m for m in untagged}
    todo = [c for c in before.reliable if selected(c)]
    in_scope = len(todo)
    if limit is not None:
        todo = todo[: max(limit, 0)]
    converted: list[str] = []
    error = None
    for start in range(0, len(todo), max(batch_size, 1)):
        batch = todo[start : start + max(batch_size, 1)]
        try:
            retain(bank_id, [replacement(memories[c.memory_id], c) for c in batch])
        except HindsightError as exc:  # report it and keep what is done: a re-run finishes the job
            error = str(exc) or "Hindsight did not accept the batch"  # the message, never the class name
            break
        converted.extend(c.document_id for c in batch)
    after = plan(gateway, bank_id, customers)
    return MigrationReport(
        bank_id=bank_id, before=before.coverage, after=after.coverage, converted=converted,
        remaining_reliable=len(after.reliable), error=error,
        scope=scope, selected_before=in_scope if only else None,
        selected_after=sum(1 for c in after.reliable if selected(c)) if only else None,
    )  # fmt: skip

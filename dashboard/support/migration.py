"""Measured migration of untagged (legacy) support documents to customer tags. No Streamlit.

The unit is the document, in both server modes: without an LLM a document is one memory holding its
text; with one it is several rewritten facts that no longer start with the legacy marker. So the bank is
read as documents and each is judged and rebuilt from its ORIGINAL text (`GET .../documents/{id}`).

1. Read the bank: its untagged documents (`GET .../documents?tags_match=exact`, no tags: checked on
   1.1.0, only untagged documents match), paged, each with its original text, and its document count. A
   tagged document in that listing means the filter changed meaning: `MigrationError`, nothing is written.
2. Classify each against the customer directory with the SAME ownership rule as the live fallback
   (`admission`): reliable identity = the original text starts with a marker that names exactly one
   directory customer; otherwise failed validation (text not stored, no marker, marker not at the start,
   unknown customer, ambiguous customer).
3. Dry run: counts, per-document reasons and coverage; nothing is written.
4. Apply: for each reliable document, re-retain the SAME document id with its original text, its original
   time, context and metadata (as the server kept them), the customer's tag and migration metadata.
   Hindsight's `document_id` + replace semantics swap the untagged document (all its facts) for the tagged
   one in place: no duplicate, and running again (or after a crash halfway) only converts what is still
   untagged. The result is deterministic (no wall-clock values are written), so a resumed run ends exactly
   where a clean run does.
5. Coverage before/after, in documents, and a readiness flag: the fallback can be retired when no
   convertible legacy document is left. Apply reads the bank twice: once to plan, once to measure after.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.wire import MemoryRecord, StoredDocument
from dashboard.support.admission import has_marker_at_start, leading_marker_name, marker_position
from dashboard.support.customers import customer_tag
from dashboard.support.directory import check_directory
from dashboard.support.models import Customer

PAGE = 500
DEFAULT_BATCH = 10
MIGRATED_FROM = "untagged-legacy"


class Classification(BaseModel):
    document_id: str
    status: Literal["reliable", "failed"]
    customer: str | None = None
    tag: str | None = None
    reason: str
    text: str


class Coverage(BaseModel):
    """The bank's documents (whatever number of memories the server made of each)."""

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
        return {
            **self.model_dump(),
            "tagged_share": self.tagged_share,
            "ready_to_retire_fallback": self.ready_to_retire_fallback,
        }


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


def legacy_documents(gateway, bank_id: str) -> list[StoredDocument]:
    """The bank's untagged documents with their original text, filtered by the server; MigrationError if it
    lists a tagged one (re-retaining it would replace its tags)."""
    listed = _page_through(
        lambda limit, offset: gateway.list_documents(bank_id, untagged=True, limit=limit, offset=offset)
    )
    tagged = [item["id"] for item in listed if item.get("tags")]
    if tagged:
        raise MigrationError(
            f"Hindsight's untagged filter (tags_match='exact', no tags) listed {len(tagged)} tagged documents "
            f"(e.g. {', '.join(map(str, tagged[:3]))}): the filter no longer means 'untagged', so the migration stops"
        )
    found = [gateway.document(bank_id, item["id"]) for item in listed]
    return sorted((d for d in found if d is not None), key=lambda d: d.id)  # one deleted meanwhile is simply gone


def classify(document: StoredDocument, customers: Sequence[Customer]) -> Classification:
    text = document.original_text
    base = {"document_id": document.id, "text": text or ""}
    if text is None:
        return Classification(
            **base, status="failed", reason="its original text is not stored: it cannot be judged or rebuilt"
        )
    named = leading_marker_name(text)
    if named is None:
        inner = marker_position(text)
        reason = (
            f"marker not at the start (at character {inner}): ownership not proven"
            if inner is not None
            else "no 'Customer <name> contacted support.' marker (e.g. a summary)"
        )
        return Classification(**base, status="failed", reason=reason)
    owners = [c.name for c in customers if has_marker_at_start(text, c.name)]
    if not owners:
        return Classification(
            **base, status="failed", reason=f"unknown customer: the marker names '{named}', who is not in the directory"
        )
    if len(owners) > 1:
        return Classification(
            **base, status="failed", reason=f"ambiguous customer: the marker matches {', '.join(owners)}"
        )
    owner = owners[0]
    return Classification(
        **base,
        status="reliable",
        customer=owner,
        tag=customer_tag(owner),
        reason=f"the marker names exactly one directory customer: {owner}",
    )


def plan(gateway, bank_id: str, customers: Sequence[Customer]) -> MigrationPlan:
    """The dry run: reads the bank once, writes nothing."""
    return _plan(bank_id, _document_count(gateway, bank_id), legacy_documents(gateway, bank_id), customers)


def _document_count(gateway, bank_id: str) -> int:
    return int(gateway.list_documents(bank_id, limit=1).get("total", 0))


def _plan(bank_id: str, total: int, untagged: list[StoredDocument], customers: Sequence[Customer]) -> MigrationPlan:
    problems = check_directory(customers)
    results = [classify(d, [] if problems else customers) for d in untagged]
    reliable = [c for c in results if c.status == "reliable"]
    failed = [c for c in results if c.status == "failed"]
    if problems:
        for c in failed:
            c.reason = "directory is not safe to migrate against: " + "; ".join(problems)
    coverage = Coverage(total=total, tagged=total - len(untagged), untagged=len(untagged), convertible=len(reliable))
    return MigrationPlan(
        bank_id=bank_id, coverage=coverage, reliable=reliable, failed=failed, directory_problems=problems
    )


def replacement(document: StoredDocument, classification: Classification) -> MemoryRecord:
    """The tagged document that replaces an untagged one: same id, same original text, time, context and metadata."""
    params = document.retain_params
    try:
        timestamp = datetime.fromisoformat(params["event_date"]) if params.get("event_date") else None
    except (TypeError, ValueError):
        timestamp = None
    metadata = {str(k): str(v) for k, v in (params.get("metadata") or {}).items()}
    return MemoryRecord(
        document_id=document.id,
        content=document.original_text or "",
        tags=[classification.tag],
        metadata={
            **metadata,
            "kind": "interaction",
            "customer": classification.customer,
            "migrated_from": MIGRATED_FROM,
        },
        timestamp=timestamp,
        context=params.get("context") or None,
    )


def apply(
    gateway,
    bank_id: str,
    customers: Sequence[Customer],
    *,
    batch_size: int = DEFAULT_BATCH,
    limit: int | None = None,
    retain: Callable[[str, list[MemoryRecord]], object] | None = None,
    only: Callable[[Classification], bool] | None = None,
    scope: str | None = None,
) -> MigrationReport:
    """Convert reliable untagged documents in batches; stops cleanly at `limit` documents or at the first failure.

    `only` narrows the run to the reliable documents it selects (one customer, one document), `scope` names
    that selection in the report. Safe to run again at any time: it re-plans from what the server
    holds, so converted documents are no longer untagged and are not touched twice.
    """
    selected = only or (lambda _c: True)
    retain = retain or gateway.retain
    untagged = legacy_documents(gateway, bank_id)
    before = _plan(bank_id, _document_count(gateway, bank_id), untagged, customers)
    if before.directory_problems:
        raise DirectoryError("; ".join(before.directory_problems))
    documents = {d.id: d for d in untagged}
    todo = [c for c in before.reliable if selected(c)]
    in_scope = len(todo)
    if limit is not None:
        todo = todo[: max(limit, 0)]
    converted: list[str] = []
    error = None
    for start in range(0, len(todo), max(batch_size, 1)):
        batch = todo[start : start + max(batch_size, 1)]
        try:
            retain(bank_id, [replacement(documents[c.document_id], c) for c in batch])
        except HindsightError as exc:  # report it and keep what is done: a re-run finishes the job
            error = str(exc) or "Hindsight did not accept the batch"  # the message, never the class name
            break
        converted.extend(c.document_id for c in batch)
    after = plan(gateway, bank_id, customers)
    return MigrationReport(
        bank_id=bank_id,
        before=before.coverage,
        after=after.coverage,
        converted=converted,
        remaining_reliable=len(after.reliable),
        error=error,
        scope=scope,
        selected_before=in_scope if only else None,
        selected_after=sum(1 for c in after.reliable if selected(c)) if only else None,
    )

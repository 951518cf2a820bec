"""Seed the demo banks. Idempotent: every record has a fixed document id, and a record already stored
with the same text and tags is not sent again, so a second run writes nothing."""

from __future__ import annotations

from collections.abc import Callable

from dashboard import demo_data
from dashboard.finance.models import Precedent
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryRecord
from dashboard.queue_files import load_rows
from dashboard.settings import Settings
from dashboard.support.customers import customer_tag
from dashboard.support.models import SupportInteraction

PAGE = 500


def finance_records() -> list[MemoryRecord]:
    return [p.to_record() for p in load_rows(demo_data.PRECEDENTS, Precedent)]


def support_records() -> list[MemoryRecord]:
    records = []
    for item in load_rows(demo_data.SUPPORT_HISTORY, SupportInteraction):
        if item.tagged:
            tags, metadata = [customer_tag(item.customer)], {"kind": "interaction", "customer": item.customer}
        else:  # the legacy format: no tags, no metadata, ownership only in the text
            tags, metadata = [], {}
        records.append(MemoryRecord(document_id=item.id, content=item.text, tags=tags, metadata=metadata))
    return records


def stored_documents(gateway: HindsightGateway, bank_id: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """document id -> (text, sorted tags) of what the bank holds now."""
    stored: dict[str, tuple[str, tuple[str, ...]]] = {}
    offset = 0
    while True:
        page = gateway.list_memories(bank_id, limit=PAGE, offset=offset)
        for item in page.get("items", []):
            stored[item["document_id"]] = (item["text"], tuple(sorted(item.get("tags") or [])))
        offset += PAGE
        if offset >= page.get("total", 0):
            return stored


def seed_bank(gateway: HindsightGateway, bank_id: str, records: list[MemoryRecord]) -> int:
    """Retain the records the bank does not already hold as they are; returns how many were sent."""
    gateway.ensure_bank(bank_id)
    stored = stored_documents(gateway, bank_id)
    missing = [r for r in records if stored.get(r.document_id) != (r.content, tuple(sorted(r.tags)))]
    gateway.retain(bank_id, missing)
    return len(missing)


def seed_demo_data(gateway: HindsightGateway, settings: Settings, log: Callable[[str], None] = print) -> dict:
    counts = {}
    for bank_id, records in ((settings.finance_bank, finance_records()), (settings.support_bank, support_records())):
        sent = seed_bank(gateway, bank_id, records)
        if settings.embedded:  # the demo's own server: record what agents recall (an external one is the owner's call)
            gateway.enable_audit_log(bank_id)
        log(f"{bank_id}: {len(records)} demo records, {sent} written ({len(records) - sent} already present)")
        counts[bank_id] = {"demo_records": len(records), "written": sent}
    return counts

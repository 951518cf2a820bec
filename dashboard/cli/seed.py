"""Seed the demo banks. Idempotent by document: every record has a fixed document id, and a document
already stored with the same text (its content hash) and tags is not sent again, so a second run writes
nothing, whether the server stores texts verbatim or extracts facts from them. Then (`seed_flags`) every
queued case's flags are measured into the review store, so a fresh start shows real figures at once."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from dashboard.finance.kind import FINANCE
from dashboard.hindsight.errors import HindsightUnavailable
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryRecord
from dashboard.kinds import bank_of, registered, seed_of
from dashboard.queue_files import load_rows
from dashboard.settings import Settings
from dashboard.support.kind import SUPPORT

PAGE = 500
CONSOLIDATION_WAIT_S = 600.0


def content_hash(text: str) -> str:
    """The hash Hindsight keeps of a document's text (sha256 of it, hex)."""
    return hashlib.sha256(text.encode()).hexdigest()


def finance_records() -> list[MemoryRecord]:
    return list(seed_of(FINANCE))


def support_records() -> list[MemoryRecord]:
    return list(seed_of(SUPPORT))


def stored_documents(gateway: HindsightGateway, bank_id: str) -> dict[str, tuple[str | None, tuple[str, ...], str]]:
    """document id -> (content hash, sorted tags, metadata) of what the bank holds now. Documents, not memories: with
    an LLM a document is several rewritten facts, none equal to the text sent; the server keeps the text's hash."""
    stored: dict[str, tuple[str | None, tuple[str, ...], str]] = {}
    offset = 0
    while True:
        page = gateway.list_documents(bank_id, limit=PAGE, offset=offset)
        for item in page.get("items", []):
            stored[item["id"]] = (
                item.get("content_hash"),
                tuple(sorted(item.get("tags") or [])),
                _metadata_key(item.get("document_metadata")),
            )
        offset += PAGE
        if offset >= page.get("total", 0) or not page.get("items"):
            return stored


def _metadata_key(metadata: dict | None) -> str:
    return json.dumps(sorted((metadata or {}).items()))


def seed_bank(
    gateway: HindsightGateway,
    bank_id: str,
    records: list[MemoryRecord],
    sign: Callable[[MemoryRecord], MemoryRecord] | None = None,
) -> int:
    """Retain the records the bank does not already hold as they are (signed by `sign`: the demo seed wrote them,
    origin.provenance); returns how many were sent."""
    gateway.ensure_bank(bank_id)
    stored = stored_documents(gateway, bank_id)
    records = [sign(r) for r in records] if sign else records
    missing = [
        r
        for r in records
        if stored.get(r.document_id) != (content_hash(r.content), tuple(sorted(r.tags)), _metadata_key(r.metadata))
    ]
    gateway.retain(bank_id, missing)
    return len(missing)


def seed_demo_data(gateway: HindsightGateway, settings: Settings, log: Callable[[str], None] = print) -> dict:
    from dashboard.cli.agent_commands import open_stores

    provenance = open_stores(settings)[0].provenance  # the seed's records are signed as the demo seed's
    counts = {}
    seeds = [(bank_of(settings, kind), list(seed_of(kind))) for kind in registered(settings)]
    for bank_id, records in [(bank, records) for bank, records in seeds if records]:  # every kind that declares a seed
        sent = seed_bank(gateway, bank_id, records, lambda r: provenance.sign(r, "seed"))
        if settings.embedded:  # the demo's own server: record what agents recall (an external one is the owner's call)
            gateway.enable_audit_log(bank_id)
        log(f"{bank_id}: {len(records)} demo records, {sent} written ({len(records) - sent} already present)")
        counts[bank_id] = {"demo_records": len(records), "written": sent}
    for bank_id in counts:
        if counts[bank_id]["written"]:
            _settle(gateway, bank_id, log)
    return counts


def _settle(gateway: HindsightGateway, bank_id: str, log: Callable[[str], None]) -> None:
    """With observations on, wait for the server to consolidate what was written, so the figures measured next
    include them; a slow LLM only delays that, it never fails the seed."""
    if not gateway.memory_mode(bank_id).observations:
        return
    log(f"{bank_id}: waiting for the server to consolidate observations ...")
    try:
        gateway.wait_until_consolidated(bank_id, timeout=CONSOLIDATION_WAIT_S)
    except HindsightUnavailable as exc:
        log(f"{bank_id}: {exc}; the figures may change once it has")


def seed_flags(
    gateway: HindsightGateway, settings: Settings, log: Callable[[str], None] = print, incidents: bool = True
) -> dict[str, int]:
    """Recall every queued exception (with its crowd-out check) and ticket, check the agents' runs for
    incidents (unless `incidents` is False: a store whose incidents were never checked, as a bench wants it), and keep
    the per-case flags in the review store: what the queue tables and the Overview read."""
    from dashboard.agents.findings import find_incidents, store_incident_kinds
    from dashboard.cli.agent_commands import open_stores
    from dashboard.finance import flags as finance_flags
    from dashboard.finance.decisions import document_id_for
    from dashboard.finance.models import ExceptionCase
    from dashboard.finance.recall import DEFAULT_K, CaseKey, atwo_stage_recall, check_crowd_out
    from dashboard.hindsight.write_facts import asker
    from dashboard.review.casework import Casework
    from dashboard.support import flags as ticket_flags
    from dashboard.support.models import Ticket
    from dashboard.support.recall import recall_for_ticket

    outbox, runs_store = open_stores(settings)
    casework = Casework(outbox.engine)
    cases, tickets = load_rows(settings.exceptions_file, ExceptionCase), load_rows(settings.tickets_file, Ticket)
    bank = settings.finance_bank
    jobs = [
        (
            lambda c=c: atwo_stage_recall(
                gateway.arecall, bank, CaseKey.of(c), c.recall_query(), k=DEFAULT_K, own_document=document_id_for(c.id)
            )
        )
        for c in cases
    ]
    results = {
        c.id: r for c, r in zip(cases, gateway.recall_many(jobs), strict=True) if not isinstance(r, BaseException)
    }
    results = {
        case_id: check_crowd_out(gateway.recall, r) for case_id, r in results.items()
    }  # one more call only where pass 2 was skipped
    finance_flags.keep(casework, bank, results, outbox.provenance.origin, asker(gateway, bank))
    recalls = {
        t.id: recall_for_ticket(
            gateway.recall, settings.support_bank, t.customer, t.issue, read_document=gateway.document
        )
        for t in tickets
    }
    ticket_flags.keep(casework, settings.support_bank, recalls)
    runs = [r for b in (bank, settings.support_bank) for r in runs_store.runs(bank_id=b)] if incidents else []
    found = find_incidents(gateway, runs_store, outbox, runs) if incidents else []
    if incidents:
        store_incident_kinds(casework, runs, found)
    outbox.engine.dispose()
    log(
        f"case flags: {len(results)} of {len(cases)} exceptions, {len(recalls)} tickets, {len(found)} incident(s) in {len(runs)} agent runs"
    )
    return {"exceptions": len(results), "tickets": len(recalls), "incidents": len(found)}

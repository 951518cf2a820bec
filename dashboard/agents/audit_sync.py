"""Incremental sync of Hindsight's audit log into the review store, and an agent run's audit ids.

Only the banks it is given (the configured ones) are read. Each new recall entry's body is fetched
once and kept as a compact projection (request tags and mode, result documents with their tags, scores and text hash);
pages read the projection and never wait on the audit log. The cursor per bank is the newest entry's
start time; entries already stored are skipped by id. No Streamlit here.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from pydantic import BaseModel

from dashboard.agents.snapshots import response_hash, result_refs
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import RecallResponse
from dashboard.review.agent_runs import AgentRun, AgentRunStore, AuditRecall

PAGE = 500
FETCHERS = 4  # bodies fetched in parallel (the server is about one core)
SETTLE_S = 5.0
OVERLAP = timedelta(seconds=60)  # audit writes are fire-and-forget: how long a run waits for its entries


class SyncReport(BaseModel):
    bank_id: str
    listed: int = 0
    fetched: int = 0
    added: int = 0
    audit_log_enabled: bool | None = None


def project_entry(entry: dict) -> AuditRecall:
    """The compact projection of one recall entry (its request and response bodies)."""
    request = entry.get("request") or {}
    response = RecallResponse.model_validate(entry.get("response") or {})
    return AuditRecall(
        entry_id=str(entry["id"]), bank_id=entry["bank_id"], started_at=datetime.fromisoformat(entry["started_at"]),
        query=str(request.get("query") or ""), tags=list(request.get("tags") or []), tags_match=request.get("tags_match"),
        results=result_refs(response), text_hash=response_hash(m.text for m in response.results),
    )


def _list_new(gateway: HindsightGateway, bank_id: str, start: str | None) -> list[dict]:
    items, offset = [], 0
    while True:
        page = gateway.list_audit_entries(bank_id, action="recall", start=start, limit=PAGE, offset=offset)
        items += page.get("items", [])
        offset += PAGE
        if offset >= page.get("total", 0) or not page.get("items"):
            return items


def _fetch(gateway: HindsightGateway, bank_id: str, ids: list[str]) -> list[AuditRecall]:
    with ThreadPoolExecutor(FETCHERS) as pool:
        return list(pool.map(lambda i: project_entry(gateway.audit_entry(bank_id, i)), ids))


def sync_bank(gateway: HindsightGateway, store: AgentRunStore, bank_id: str) -> SyncReport:
    """Read the bank's recall entries newer than the cursor; fetch and store the new ones once."""
    since = store.synced_until(bank_id)
    # Audit writes land a moment late and not always in start order: re-list an overlap, skip known ids.
    listed = _list_new(gateway, bank_id, (since - OVERLAP).isoformat() if since else None)
    report = SyncReport(bank_id=bank_id, listed=len(listed))
    known = store.known_entries(bank_id, [i["id"] for i in listed])
    new_ids = [i["id"] for i in listed if i["id"] not in known]
    projections = _fetch(gateway, bank_id, new_ids)
    report.fetched = len(projections)
    report.added = store.add_entries(projections)
    if listed:
        newest = max(datetime.fromisoformat(i["started_at"]) for i in listed)
        store.set_synced_until(bank_id, newest, report.added)
    return report


def sync_banks(gateway: HindsightGateway, store: AgentRunStore, bank_ids: list[str]) -> list[SyncReport]:
    return [sync_bank(gateway, store, bank) for bank in bank_ids]


def _same_request(entry: AuditRecall, query: str, tags: list[str], tags_match: str | None) -> bool:
    return entry.query.strip() == query.strip() and sorted(entry.tags) == sorted(tags) and (entry.tags_match or "any") == (tags_match or "any")


def match_run(run: AgentRun, entries: list[AuditRecall], claimed: set[str] = frozenset()) -> AgentRun:
    """The run with each recall's audit id: the entry with the same request, in the run's time window,
    that no other run has claimed (two runs on one case send identical requests)."""
    lo, hi = run.started_at - timedelta(seconds=2), run.ended_at + timedelta(seconds=2)
    taken: set[str] = set(claimed)
    recalls = []
    for snap in run.recalls:
        entry = next(
            (e for e in sorted(entries, key=lambda e: e.started_at)
             if e.entry_id not in taken and lo <= e.started_at <= hi and _same_request(e, snap.query, snap.tags, snap.tags_match)),
            None,
        )
        if entry is not None:
            taken.add(entry.entry_id)
        recalls.append(snap.model_copy(update={"audit_id": entry.entry_id if entry else None}))
    return run.model_copy(update={"recalls": recalls})


def resolve_audit_ids(gateway: HindsightGateway, store: AgentRunStore, run: AgentRun, settle_s: float = SETTLE_S) -> AgentRun:
    """Sync the bank and match the run's recalls to their entries, waiting briefly for late writes."""
    enabled = gateway.audit_log_enabled(run.bank_id)
    run = run.model_copy(update={"audit_log": enabled})
    if not enabled or not run.recalls:
        return run
    deadline = time.monotonic() + settle_s
    while True:
        sync_bank(gateway, store, run.bank_id)
        since = run.started_at - timedelta(seconds=2)
        claimed = {i for other in store.runs(bank_id=run.bank_id, ended_since=since) for i in other.audit_ids}
        matched = match_run(run, store.entries(run.bank_id, since=since), claimed)
        if all(r.audit_id for r in matched.recalls) or time.monotonic() > deadline:
            return matched
        time.sleep(0.2)

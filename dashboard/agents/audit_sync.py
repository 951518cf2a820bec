"""Incremental sync of Hindsight's audit log into the review store, and an agent run's audit ids.

Only the banks it is given (the configured ones) are read. Each new recall entry's body is fetched
once and kept as a compact projection (request tags and mode, result documents with their tags, scores and text hash);
pages read the projection and never wait on the audit log.

The log is read forward from a cursor (the newest entry read in order, kept in the store), oldest first, in windows of
time holding at most PAGE entries each (the server lists newest first, with a count: a window is one request, never an
offset into the whole log). Each window's new bodies are stored, and the cursor moved past it, before the next window is
read, so a read stopped halfway (a restart) goes on from where it was, and the store always says how far it got (entries
read of the log's count). Entries already stored are skipped by id. What a page needs now (a run's own entries) is read
by id or by the run's time, never by reading the log from its start. No Streamlit here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from pydantic import BaseModel

from dashboard.agents.snapshots import response_hash, result_refs
from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import RecallResponse
from dashboard.store.agent_runs import AgentRun, AgentRunStore, AuditRecall

PAGE = 500  # the most entries the server lists in one request
FILL = 0.8  # a window is sized for this share of PAGE entries, going by the last window's density
CHUNK = 32  # bodies stored in one transaction (with the count of entries read: the progress a page shows)
FETCHERS = 4  # bodies fetched in parallel (the server is about one core), after each look at `before_each`
SETTLE_S = 5.0
OVERLAP = timedelta(seconds=60)  # audit writes are fire-and-forget: entries can land this late behind the cursor
RUN_MARGIN = timedelta(seconds=2)  # an agent run's entries start within this of the run
TICK = timedelta(microseconds=1)  # the server's time resolution: [start, end) windows
NARROWEST = timedelta(milliseconds=1)  # below this a window is paged through instead of narrowed again


class SyncReport(BaseModel):
    bank_id: str
    listed: int = 0
    fetched: int = 0
    added: int = 0
    audit_log_enabled: bool | None = None
    log_entries: int | None = None  # the log's recall entries when the read began
    windows: int = 0  # list requests
    caught_up: bool = False  # the read reached the newest entry the log held when it began


def project_entry(entry: dict) -> AuditRecall:
    """The compact projection of one recall entry (its request and response bodies)."""
    request = entry.get("request") or {}
    response = RecallResponse.model_validate(entry.get("response") or {})
    return AuditRecall(
        entry_id=str(entry["id"]),
        bank_id=entry["bank_id"],
        started_at=datetime.fromisoformat(entry["started_at"]),
        query=str(request.get("query") or ""),
        tags=list(request.get("tags") or []),
        tags_match=request.get("tags_match"),
        results=result_refs(response),
        text_hash=response_hash(m.text for m in response.results),
    )


def _started(item: dict) -> datetime:
    return datetime.fromisoformat(item["started_at"])


def _listed(gateway: HindsightGateway, bank_id: str, lo: datetime | None, hi: datetime | None) -> list[dict]:
    """Every recall entry in [lo, hi) (bounds optional), without bodies: pages of PAGE until the count is listed."""
    items: list[dict] = []
    while True:
        page = gateway.list_audit_entries(
            bank_id,
            action="recall",
            start=lo.isoformat() if lo else None,
            end=hi.isoformat() if hi else None,
            limit=PAGE,
            offset=len(items),
        )
        items += page.get("items") or []
        if len(items) >= page.get("total", 0) or not page.get("items"):
            return items


def _fetch(gateway: HindsightGateway, bank_id: str, ids: list[str], pool: ThreadPoolExecutor) -> list[AuditRecall]:
    if len(ids) <= 1:
        return [project_entry(gateway.audit_entry(bank_id, i)) for i in ids]
    return list(pool.map(lambda i: project_entry(gateway.audit_entry(bank_id, i)), ids))


def _store_new(
    gateway: HindsightGateway,
    store: AgentRunStore,
    bank_id: str,
    items: list[dict],
    report: SyncReport,
    before_each: Callable[[], None] | None = None,
    progress: Callable[[int], None] | None = None,
    keep_going: Callable[[], bool] | None = None,
) -> bool:
    """Fetch and store the listed entries the store does not hold yet, oldest first: FETCHERS bodies at a time, each
    round after `before_each` (so a page that starts waits for one round at most), stored CHUNK at a time; False when
    `keep_going` stopped it before the last."""
    known = store.known_entries(bank_id, [i["id"] for i in items])
    new = [i["id"] for i in sorted((i for i in items if i["id"] not in known), key=_started)]
    with ThreadPoolExecutor(FETCHERS, thread_name_prefix="audit-fetch") as pool:
        for start in range(0, len(new), CHUNK):
            if keep_going is not None and start and not keep_going():
                return False
            projections: list[AuditRecall] = []
            for at in range(start, min(start + CHUNK, len(new)), FETCHERS):
                if before_each is not None:
                    before_each()
                projections += _fetch(gateway, bank_id, new[at : at + FETCHERS], pool)
            report.fetched += len(projections)
            added = store.record_read(bank_id, projections)
            report.added += added
            if progress is not None and added:
                progress(added)
    return True


def _log_head(gateway: HindsightGateway, bank_id: str, since: datetime | None = None) -> tuple[int, datetime | None]:
    """(the recall entries that started at or after `since`, or in the whole log; when the newest one started). The
    server counts what the request covers: from a cursor, only what is new, however long the log."""
    page = gateway.list_audit_entries(bank_id, action="recall", start=since.isoformat() if since else None, limit=1)
    items = page.get("items") or []
    return int(page.get("total", 0)), _started(items[0]) if items else None


def count_log(gateway: HindsightGateway, store: AgentRunStore, bank_id: str) -> tuple[int, datetime | None]:
    """How many entries the bank's log holds for the store, as read plus left to read, kept in the store (what a page
    says it is reading), and when the newest started. A store with a cursor counts only from it (minus the overlap:
    the few entries already read there are counted twice until the read ends, when the count is made exact)."""
    state = store.sync_state(bank_id)
    if state.synced_until is None:
        total, newest = _log_head(gateway, bank_id)
    else:
        since, newest = _log_head(gateway, bank_id, state.synced_until - OVERLAP)
        total = state.entries + since
    store.record_read(bank_id, [], log_entries=total)
    return total, newest


def _log_tail(gateway: HindsightGateway, bank_id: str, total: int) -> datetime | None:
    """When the oldest recall entry started (once per store and bank): the entry at the end of the newest-first list,
    then confirmed by counting what started before it (none, unless entries landed between the requests)."""
    items = gateway.list_audit_entries(bank_id, action="recall", limit=1, offset=max(0, total - 1)).get("items") or []
    if not items:  # entries removed meanwhile (retention): the newest-first list's first is a start
        items = gateway.list_audit_entries(bank_id, action="recall", limit=1).get("items") or []
    oldest = _started(items[0]) if items else None
    while oldest is not None:
        before = int(
            gateway.list_audit_entries(bank_id, action="recall", end=oldest.isoformat(), limit=1).get("total", 0)
        )
        if before == 0:
            return oldest
        items = (
            gateway.list_audit_entries(
                bank_id, action="recall", end=oldest.isoformat(), limit=1, offset=before - 1
            ).get("items")
            or []
        )
        oldest = _started(items[0]) if items else oldest - OVERLAP
    return oldest


def sync_bank(
    gateway: HindsightGateway,
    store: AgentRunStore,
    bank_id: str,
    *,
    before_each: Callable[[], None] | None = None,
    keep_going: Callable[[], bool] | None = None,
    progress: Callable[[int], None] | None = None,
) -> SyncReport:
    """Read the bank's recall entries from the cursor forward, oldest first, up to the newest the log holds now; fetch and
    store the new ones once. `before_each` runs before each FETCHERS bodies (the app waits there for its pages),
    `keep_going` before each window and each CHUNK stored (False stops the read where it is: the process is ending, or
    another reader took over), `progress` after each CHUNK stored (with the entries it added)."""
    state = store.sync_state(bank_id)
    total, newest = count_log(gateway, store, bank_id)  # what a page says it is reading: entries read of this count
    report = SyncReport(bank_id=bank_id, log_entries=total, windows=1)
    if newest is None:  # an empty log (or nothing since the cursor, retention having removed the entries behind it)
        store.record_read(bank_id, [], caught_up=True)
        report.caught_up = True
        return report
    end = newest + TICK
    if state.synced_until is not None:  # audit writes land a moment late and not always in order: an overlap again
        lo = state.synced_until - OVERLAP
        width = end - lo  # usually a few entries: one window
    else:
        oldest = _log_tail(gateway, bank_id, total)
        report.windows += 1
        lo = oldest or newest
        width = (end - lo) * (PAGE * FILL / max(total, 1))  # evenly spread, a window holds ~PAGE * FILL
    while lo < end:
        if keep_going is not None and not keep_going():
            return report
        hi = min(lo + max(width, NARROWEST), end)
        page = gateway.list_audit_entries(
            bank_id, action="recall", start=lo.isoformat(), end=hi.isoformat(), limit=PAGE
        )
        report.windows += 1
        count = int(page.get("total", 0))
        if count > PAGE and hi - lo > NARROWEST:  # too many in this window: a narrower one, by its density
            width = (hi - lo) * (PAGE * FILL / count)
            continue
        items = page.get("items") or []
        if count > len(items):  # a burst in under a millisecond: page through it
            items += _listed(gateway, bank_id, lo, hi)[len(items) :]
        report.listed += len(items)
        if not _store_new(gateway, store, bank_id, items, report, before_each, progress, keep_going):
            return report  # stopped halfway through the window: the cursor stays before it, its entries are kept
        caught_up = hi >= end
        store.record_read(bank_id, [], until=max(map(_started, items)) if items else None, caught_up=caught_up)
        report.caught_up = caught_up
        width = min((hi - lo) * 4, (hi - lo) * (PAGE * FILL / max(count, 1)))  # the next window by this one's density
        lo = hi
    return report


def sync_banks(gateway: HindsightGateway, store: AgentRunStore, bank_ids: list[str]) -> list[SyncReport]:
    return [sync_bank(gateway, store, bank) for bank in bank_ids]


def sync_window(
    gateway: HindsightGateway, store: AgentRunStore, bank_id: str, lo: datetime, hi: datetime
) -> SyncReport:
    """Store the recall entries that started in [lo, hi) (an agent run's time), whatever the cursor; it stays where it is."""
    items = _listed(gateway, bank_id, lo, hi)
    report = SyncReport(bank_id=bank_id, listed=len(items), windows=1 + len(items) // PAGE)
    _store_new(gateway, store, bank_id, items, report)
    return report


def read_entries(gateway: HindsightGateway, store: AgentRunStore, bank_id: str, entry_ids: list[str]) -> int:
    """Store the named entries the store does not hold yet, each read by its id (what a page shows now, while the log
    is still being read from its start); returns how many were read. An entry the server no longer has is skipped."""
    known = store.known_entries(bank_id, list(entry_ids))
    missing = [i for i in dict.fromkeys(entry_ids) if i not in known]
    found = []
    for entry_id in missing:
        try:
            found.append(project_entry(gateway.audit_entry(bank_id, entry_id)))
        except HindsightError:  # gone (retention) or unreadable: the page shows the agent's own record of it
            continue
    return store.record_read(bank_id, found) if found else 0


def _same_request(entry: AuditRecall, query: str, tags: list[str], tags_match: str | None) -> bool:
    return (
        entry.query.strip() == query.strip()
        and sorted(entry.tags) == sorted(tags)
        and (entry.tags_match or "any") == (tags_match or "any")
    )


def match_run(run: AgentRun, entries: list[AuditRecall], claimed: set[str] = frozenset()) -> AgentRun:
    """The run with each recall's audit id: the entry with the same request, in the run's time window,
    that no other run has claimed (two runs on one case send identical requests)."""
    lo, hi = run.started_at - RUN_MARGIN, run.ended_at + RUN_MARGIN
    taken: set[str] = set(claimed)
    recalls = []
    for snap in run.recalls:
        entry = next(
            (
                e
                for e in sorted(entries, key=lambda e: e.started_at)
                if e.entry_id not in taken
                and lo <= e.started_at <= hi
                and _same_request(e, snap.query, snap.tags, snap.tags_match)
            ),
            None,
        )
        if entry is not None:
            taken.add(entry.entry_id)
        recalls.append(snap.model_copy(update={"audit_id": entry.entry_id if entry else None}))
    return run.model_copy(update={"recalls": recalls})


def resolve_audit_ids(
    gateway: HindsightGateway, store: AgentRunStore, run: AgentRun, settle_s: float = SETTLE_S
) -> AgentRun:
    """Sync the bank and match the run's recalls to their entries, waiting briefly for late writes."""
    enabled = gateway.audit_log_enabled(run.bank_id)
    run = run.model_copy(update={"audit_log": enabled})
    if not enabled or not run.recalls:
        return run
    deadline = time.monotonic() + settle_s
    while True:
        # the entries of the run's own time only: an agent's run costs its recalls, not the log's length
        sync_window(gateway, store, run.bank_id, run.started_at - RUN_MARGIN, run.ended_at + RUN_MARGIN + TICK)
        since = run.started_at - RUN_MARGIN
        claimed = {i for other in store.runs(bank_id=run.bank_id, ended_since=since) for i in other.audit_ids}
        matched = match_run(run, store.entries(run.bank_id, since=since), claimed)
        if all(r.audit_id for r in matched.recalls) or time.monotonic() > deadline:
            return matched
        time.sleep(0.2)

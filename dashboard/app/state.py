"""The app's state: the ONE module that owns every Streamlit cache (st.cache_resource, st.cache_data).

Per server process: the settings, the Hindsight gateway, the review store (its engine, the decision
outbox and the delivery worker thread, the casework: claims, comments and the per-case flags each
computed recall writes), the recall log, the finance recall cache (invalidated per vendor and type), its
background prefetch, and the ticket recalls (invalidated per customer). Pages and the entry point read
state through these functions; nothing else caches.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from dashboard.agents.audit_sync import sync_bank
from dashboard.agents.findings import case_then_now, find_incidents, store_incident_kinds
from dashboard.agents.incidents import Incident
from dashboard.agents.then_now import ThenNow
from dashboard.finance import flags as finance_flags
from dashboard.finance.decisions import case_id_of, document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import CaseKey, TwoStageResult, atwo_stage_recall, check_crowd_out, two_stage_recall
from dashboard.finance.recall_cache import RecallCache
from dashboard.hindsight.errors import HindsightError, HindsightUnavailable
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryMode
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.reporting.recall_log import RecallLog
from dashboard.review.agent_runs import AgentRunStore
from dashboard.review.casework import Casework
from dashboard.review.db import make_engine
from dashboard.review.outbox import DeliveryReport, Outbox
from dashboard.review.worker import DeliveryWorker
from dashboard.settings import Settings, load_settings
from dashboard.support import flags as ticket_flags
from dashboard.support import migration
from dashboard.support.customers import customer_tag
from dashboard.support.models import Customer, Ticket
from dashboard.support.recall import TicketRecall, recall_for_ticket

RECALL_TTL_S = 300
logger = logging.getLogger(__name__)


@st.cache_resource
def settings() -> Settings:
    return load_settings()


@st.cache_resource
def gateway() -> HindsightGateway:
    s = settings()
    return HindsightGateway(s.base_url, s.api_key)


@st.cache_resource
def outbox() -> Outbox:
    """The review store's decisions: SQLite in the data directory, or the team's PostgreSQL (migrated to head)."""
    s = settings()
    return Outbox(make_engine(s.store_url, s.data_dir))  # the Outbox migrates its store to head


def _stop_worker(worker: DeliveryWorker | None) -> None:
    if worker is not None:
        worker.stop()


@st.cache_resource(on_release=_stop_worker)
def worker() -> DeliveryWorker | None:
    """This process's delivery worker thread (None when configured off: `python -m dashboard worker` delivers)."""
    if not settings().delivery_worker:
        return None
    cache = recall_cache()

    def late_delivery(_report: DeliveryReport) -> None:
        # Late deliveries change what the next recall finds: drop every cached recall (outages are rare).
        cache.clear()
        _cached_ticket_recall.clear()

    return DeliveryWorker(outbox(), gateway().retain, on_delivered=late_delivery).start()


@st.cache_resource
def recall_log() -> RecallLog:
    """Recall wall times (last 500 per kind) and the latest result per case, for the Overview page."""
    return RecallLog()


@st.cache_data(ttl=5, show_spinner=False)
def connection_error() -> str | None:
    """None when Hindsight answers healthy; otherwise what is wrong. Re-checked every 5 s."""
    try:
        answer = gateway().health()
    except HindsightUnavailable as exc:
        return str(exc)
    return None if answer.get("status") == "healthy" else f"Hindsight reports: {answer}"


@st.cache_data(ttl=60, show_spinner=False)
def memory_modes(bank_ids: tuple[str, ...]) -> dict[str, MemoryMode | None]:
    """How the server stores each bank (verbatim or extracting, observations), as it says; None: unknown."""
    modes: dict[str, MemoryMode | None] = {}
    for bank in bank_ids:
        try:
            modes[bank] = gateway().memory_mode(bank)
        except HindsightError:
            modes[bank] = None
    return modes


def deliver_now() -> None:
    """Someone pressed "Deliver now": every pending decision is due, and the worker looks at once."""
    outbox().retry_now()
    connection_error.clear()
    running = worker()
    if running is not None:
        running.wake()


# -- finance recalls ---------------------------------------------------------------


@st.cache_resource
def recall_cache() -> RecallCache:
    return RecallCache(ttl_s=RECALL_TTL_S)



def bump_generation(bank_id: str, key: CaseKey) -> None:
    """A decision was retained for this vendor and type: recall it again next time (only it)."""
    recall_cache().invalidate(bank_id, key)


def _mode(own_document: str | None) -> str:
    # A case's own decision is kept out of its evidence: results differ per case, so is the cache slot.
    return f"two-stage:{own_document}" if own_document else "two-stage"


def recall_case(bank_id: str, key: CaseKey, query: str, k: int, own_document: str | None = None) -> TwoStageResult:
    cache = recall_cache()
    cached = cache.get(bank_id, key, query, k, _mode(own_document))
    if cached is not None:
        return cached
    log = recall_log()
    with st.spinner("Recalling precedents..."), log.timed("finance two-stage"):
        result = two_stage_recall(gateway().recall, bank_id, key, query, k=k, own_document=own_document)
    log.add_finance(result)
    cache.put(result, query, _mode(own_document))
    remember_finance_flags(bank_id, {case_id_of(own_document): result})
    return result


def with_crowd_out(bank_id: str, key: CaseKey, query: str, k: int, own_document: str | None = None) -> TwoStageResult:
    """The result with its crowd-out check: pass 2 reused, or one extra call (once per cache entry) when it was skipped."""
    base = recall_case(bank_id, key, query, k, own_document)
    if base.crowd_out is not None:
        return base
    log = recall_log()
    with st.spinner("Checking crowd-out..."), log.timed("finance crowd-out check"):
        result = check_crowd_out(gateway().recall, base)
    log.add_finance(result)
    recall_cache().put(result, query, _mode(own_document))
    remember_finance_flags(bank_id, {case_id_of(own_document): result})
    return result


def cached_case(bank_id: str, case: ExceptionCase, k: int) -> TwoStageResult | None:
    """The case's recall when the cache holds it (no network call), else None."""
    return recall_cache().get(bank_id, CaseKey.of(case), case.recall_query(), k, _mode(document_id_for(case.id)))


def load_queue(
    bank_id: str, cases: Sequence[ExceptionCase], k: int, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Recall every case not cached yet, at most 4 in flight; fills the cache the case view reads.

    No trace is requested; each case costs one call (pass 1 fills k) or two. Returns counts:
    cached (already there), loaded, failed."""
    return _fill_cache(gateway(), recall_cache(), recall_log(), finance_flag_keeper(bank_id), bank_id, cases, k, progress)


def _fill_cache(
    gw: HindsightGateway, cache: RecallCache, log: RecallLog, keep_flags: Callable[[dict[str, TwoStageResult]], None],
    bank_id: str, cases: Sequence[ExceptionCase], k: int, progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:  # fmt: skip
    # No Streamlit call in here: the background prefetch runs it on a thread of its own.
    todo = [c for c in cases if cache.get(bank_id, CaseKey.of(c), c.recall_query(), k, _mode(document_id_for(c.id))) is None]
    counts = {"cached": len(cases) - len(todo), "loaded": 0, "failed": 0}
    if not todo:
        return counts

    async def timed_recall(case: ExceptionCase) -> TwoStageResult:
        # Timed inside the coroutine: its wall time includes waiting on the server, not on the other jobs.
        started = time.perf_counter()
        result = await atwo_stage_recall(
            gw.arecall, bank_id, CaseKey.of(case), case.recall_query(), k=k, own_document=document_id_for(case.id)
        )
        log.add_latency("finance two-stage", (time.perf_counter() - started) * 1000)
        return result

    # A decision retained while the queue loads makes that vendor and type's results stale: not cached.
    generations = [cache.generation(bank_id, CaseKey.of(c)) for c in todo]

    def arrived(i: int, result: TwoStageResult | BaseException) -> None:
        # Each case is usable as soon as its recall returns, not when the whole queue has.
        case = todo[i]
        if isinstance(result, BaseException):
            counts["failed"] += 1
            return
        counts["loaded"] += 1
        if cache.generation(bank_id, CaseKey.of(case)) == generations[i]:
            cache.put(result, case.recall_query(), _mode(document_id_for(case.id)))
        log.add_finance(result)
        keep_flags({case.id: result})

    gw.recall_many([(lambda c=c: timed_recall(c)) for c in todo], progress=progress, on_result=arrived)
    return counts


# -- background prefetch of the exception queue (issue 14) ---------------------------


@st.cache_resource
def _prefetches() -> dict[tuple, threading.Thread]:
    """(bank, case ids, k) -> the thread that recalled (or is recalling) that queue, once per server process."""
    return {}


_prefetch_lock = threading.Lock()


def prefetch_queue(bank_id: str, cases: Sequence[ExceptionCase], k: int, after: str | None = None) -> threading.Thread:
    """Recall the queue's cases that are not cached yet on a background thread, without blocking the page,
    starting with the cases after `after` (the open case: where J and N go next) and wrapping round.

    Idempotent per queue: the same (bank, cases, k) starts one thread per server process, whatever the
    clicks and reruns; it is never started again, so expired entries are refreshed per case, when viewed
    (recall_case). A different queue (other filters, other k) starts its own thread for what is not cached."""
    slot = (bank_id, tuple(c.id for c in cases), k)
    jobs = _prefetches()
    with _prefetch_lock:
        running = jobs.get(slot)
        if running is None:
            ids = [c.id for c in cases]
            start = ids.index(after) + 1 if after in ids else 0
            ordered = [*cases[start:], *cases[:start]]
            args = (gateway(), recall_cache(), recall_log(), finance_flag_keeper(bank_id), bank_id, ordered, k)
            running = threading.Thread(target=_fill_cache, args=args, name=f"prefetch-{bank_id}", daemon=True)
            jobs[slot] = running
            running.start()
    return running


# -- ticket recalls ----------------------------------------------------------------


@st.cache_resource
def _generations() -> dict[str, int]:
    """customer tag -> generation; bumped when a decision for that customer is retained."""
    return {}


def ticket_generation(customer: str) -> int:
    return _generations().get(customer_tag(customer), 0)


def invalidate_ticket_recalls(customer: str | None = None) -> None:
    """Make the next recall for this customer (or for everyone) go to the server again."""
    generations = _generations()
    _cached_legacy_plan.clear()  # a migration (or a decision) changes which records are untagged
    if customer is None:
        _cached_ticket_recall.clear()
        return
    tag = customer_tag(customer)
    generations[tag] = generations.get(tag, 0) + 1


@st.cache_data(ttl=RECALL_TTL_S, show_spinner=False, max_entries=200)
def _cached_ticket_recall(base_url: str, bank_id: str, customer: str, issue: str, generation: int) -> TicketRecall:
    # base_url and `generation` are only part of the cache key (no leading underscore: Streamlit would not hash them).
    log = recall_log()
    with log.timed("ticket"):
        result = recall_for_ticket(gateway().recall, bank_id, customer, issue, read_document=gateway().document)
    log.add_ticket(bank_id, issue, result)
    remember_ticket_flags(bank_id, issue, result)
    return result


def recall_ticket(bank_id: str, customer: str, issue: str) -> TicketRecall:
    return _cached_ticket_recall(settings().base_url, bank_id, customer, issue, ticket_generation(customer))


@st.cache_data(ttl=60, show_spinner=False, max_entries=4)
def _cached_legacy_plan(base_url: str, bank_id: str, names: tuple[str, ...]) -> migration.MigrationPlan:
    return migration.plan(gateway(), bank_id, [Customer(name=n) for n in names])


def legacy_plan(bank_id: str, customers: Sequence[Customer]) -> migration.MigrationPlan:
    """The migration's dry run of the support bank (its untagged records, classified), read at most once a minute."""
    return _cached_legacy_plan(settings().base_url, bank_id, tuple(c.name for c in customers))


# -- agent runs and the audit log (issue 12) -----------------------------------------


@st.cache_resource
def agent_runs() -> AgentRunStore:
    """Agent runs and the audit-log projection, in the same store as the reviewers' decisions."""
    return AgentRunStore(outbox().engine)


@st.cache_data(ttl=60, show_spinner=False)
def audit_log_on(bank_id: str) -> bool:
    try:
        return gateway().audit_log_enabled(bank_id)
    except HindsightError:
        return False


@st.cache_data(ttl=30, show_spinner=False)
def sync_audit_log(bank_id: str) -> int:
    """Sync a configured bank's audit log into the store at most every 30 s; returns entries added."""
    if not audit_log_on(bank_id):
        return 0
    try:
        return sync_bank(gateway(), agent_runs(), bank_id).added
    except HindsightError:
        return 0


def then_now(bank_id: str, case_kind: str, case_id: str, now_records) -> ThenNow:
    sync_audit_log(bank_id)
    store = agent_runs()
    return case_then_now(store, store.latest_run(case_kind, case_id, bank_id), now_records, audit_log_on(bank_id))


@st.cache_data(ttl=60, show_spinner="Checking the agent runs for incidents...")
def incidents(bank_ids: tuple[str, ...]) -> list[Incident]:
    for bank in bank_ids:
        sync_audit_log(bank)
    store = agent_runs()
    runs = [r for bank in bank_ids for r in store.runs(bank_id=bank)]
    found = find_incidents(gateway(), store, outbox(), runs)
    _keep_flags("incident kinds", lambda: store_incident_kinds(casework(), runs, found))
    return found


# -- casework: claims, comments and the per-case flags in the review store (issue 14) --
# Written whenever a recall result is computed (never on a cache hit), read by the queue tables and the
# Overview: they show at once, for every reviewer and instance, after a restart.


@st.cache_resource
def casework() -> Casework:
    """Claims, comments and the per-case flags, on the review store's engine."""
    return Casework(outbox().engine)


def case_flags(bank_id: str, case_kind: str) -> dict[str, dict]:
    """case id -> its stored flags (empty when the store cannot be read: the queue still shows)."""
    try:
        return casework().flags(bank_id, case_kind)
    except SQLAlchemyError:
        logger.warning("could not read the case flags", exc_info=True)
        return {}


def _keep_flags(what: str, write: Callable[[], None]) -> None:
    """Flags are a by-product of a recall: a store failure is logged, never fails the recall."""
    try:
        write()
    except SQLAlchemyError:
        logger.warning("could not keep the %s in the review store", what, exc_info=True)


def finance_flag_keeper(bank_id: str) -> Callable[[Mapping[str | None, TwoStageResult]], None]:
    """A function that keeps cases' flags, bound to the store now: the background prefetch calls it off
    the script thread. A recall made again without the crowd-out check keeps the earlier check."""
    store = casework()

    def keep(results: Mapping[str | None, TwoStageResult]) -> None:
        known = {case_id: r for case_id, r in results.items() if case_id}
        if known:
            _keep_flags("finance flags", lambda: finance_flags.keep(store, bank_id, known))

    return keep


def remember_finance_flags(bank_id: str, results: Mapping[str | None, TwoStageResult]) -> None:
    finance_flag_keeper(bank_id)(results)


@st.cache_data(ttl=60, show_spinner=False)
def _ticket_ids(tickets_file: str) -> dict[tuple[str, str], list[str]]:
    """(customer, issue) -> the ids of the queued tickets that recall is for."""
    try:
        tickets = load_rows(tickets_file, Ticket)
    except QueueFileError:
        return {}
    index: dict[tuple[str, str], list[str]] = {}
    for t in tickets:
        index.setdefault((" ".join(t.customer.split()), t.issue.strip()), []).append(t.id)
    return index


def remember_ticket_flags(bank_id: str, issue: str, recall: TicketRecall) -> None:
    ids = _ticket_ids(str(settings().tickets_file)).get((recall.customer, issue.strip()), [])
    if ids:
        _keep_flags("ticket flags", lambda: ticket_flags.keep(casework(), bank_id, dict.fromkeys(ids, recall)))

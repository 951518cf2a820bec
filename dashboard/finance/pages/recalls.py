"""The finance cases' recalls: cached per process, fresh across instances, the queue recalled in the background.

A recall is cached under its case's freshness stamp (review.freshness): a decision on another instance
bumps the stamp of its vendor and type, and the next open of a case of that scope recalls again. The
case on screen is recalled first; the cases after it (PREFETCH_AHEAD of them, where J and N go) are recalled
by a background job (a single-thread executor), each usable as soon as its recall returns;
a case opened while its background recall is on the wire waits for that answer rather than asking again.
Each computed recall keeps the case's flags in the review store; a cache hit writes nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from dashboard.app import resources
from dashboard.app.background import background
from dashboard.app.recall_cache import RecallCache
from dashboard.finance import flags as finance_flags
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import CaseKey, TwoStageResult, atwo_stage_recall, check_crowd_out, two_stage_recall
from dashboard.hindsight.gateway import RECALL_CONCURRENCY
from dashboard.hindsight.write_facts import asker
from dashboard.review.freshness import Freshness

logger = logging.getLogger(__name__)
IN_FLIGHT_WAIT_S = 10.0  # a background recall of the case being opened is awaited this long, then asked again
# The background job keeps one recall on the wire, so the reviewer's own requests (a case opened, a decision
# retained) wait behind at most one of its recalls instead of four.
BACKGROUND_IN_FLIGHT = 1
BACKGROUND_CHUNK = 50  # cases the background job keys at a time
# The background recalls a window ahead of the open case, not the whole queue: at 100,000 cases the whole queue
# took hours, kept the one-core server and the app busy under every key press, and churned the cache (5,000
# entries) before the reviewer got there. A job starts each time the open case enters a new stride of the queue.
PREFETCH_AHEAD = 200
PREFETCH_STRIDE = 100
# Reviewers first, twice: the first PREFETCH_SOON cases of a window (where J and N go next) are recalled as soon as
# no page runs; the rest once no page has run for QUIET_S, so a reviewer who is clicking (a key, a decision, a page
# loading in the browser) has the two cores, and one who is reading lends them. At 100,000 cases the Overview opened
# by its address took ~1.2 s beside the window's recalls and ~0.65 s without; a 1,000-case decision ~0.56 and ~0.43 s.
PREFETCH_SOON = 10
QUIET_S = 2.0


@st.cache_resource
def _cache() -> RecallCache:
    return RecallCache()


def _slot(bank_id: str, key: CaseKey, query: str, k: int, own_document: str | None, stamp: int) -> tuple:
    return (bank_id, key.scope, key.vendor_name, query.strip(), k, own_document, stamp)


def stamps(bank_id: str, cases: Sequence[ExceptionCase], freshness: Freshness | None = None) -> dict[str, int]:
    """case id -> its scope's freshness stamp, in one query (`freshness`: bound on the script thread, for a caller
    off it)."""
    scopes = {c.id: CaseKey.of(c).scope for c in cases}
    by_scope = (freshness or resources.freshness()).stamps(bank_id, set(scopes.values()))
    return {case_id: by_scope[scope] for case_id, scope in scopes.items()}


def _keep_flags(casework, origin, bank_id: str, results: dict[str, TwoStageResult], gateway) -> None:
    """Flags are a by-product of a recall: a store failure is logged, never fails the recall. Bursts are judged on the
    server's write time, as on the case page (`gateway`: bound on the script thread)."""
    try:
        finance_flags.keep(casework, bank_id, results, origin, asker(gateway, bank_id))
    except SQLAlchemyError:
        logger.warning("could not keep the finance flags in the review store", exc_info=True)


def recall_case(
    bank_id: str, key: CaseKey, query: str, k: int, own_document: str | None = None, check: bool = False
) -> TwoStageResult:
    """The case's two-stage recall, from the cache while its scope is unchanged; `check` adds the crowd-out
    check (pass 2 reused, or one more call, once per cache entry)."""
    slot = _slot(bank_id, key, query, k, own_document, resources.freshness().stamp(bank_id, key.scope))
    gateway, log = resources.gateway(), resources.recall_log()

    def ask() -> TwoStageResult:
        with st.spinner("Recalling precedents..."), log.timed("finance"):
            return two_stage_recall(gateway.recall, bank_id, key, query, k=k, own_document=own_document)

    # One recall per case and freshness stamp for the whole process: another session (or the background job) asking
    # the same is waited for, not repeated.
    result, computed = _cache().get_or_compute(slot, ask, IN_FLIGHT_WAIT_S)
    if check and result.crowd_out is None:
        with st.spinner("Checking crowd-out..."):
            result = check_crowd_out(resources.gateway().recall, result)
        computed = True
    if computed:
        _cache().put(slot, result)  # with its crowd-out check, when one was added
        case_id = own_document.removeprefix("decision-") if own_document else None
        if case_id:
            _keep_flags(
                resources.casework(),
                resources.outbox().provenance.origin,
                bank_id,
                {case_id: result},
                resources.gateway(),
            )
    return result


def cached_cases(bank_id: str, cases: Sequence[ExceptionCase], k: int) -> dict[str, TwoStageResult]:
    """case id -> its recall, for the cases the cache holds fresh (no network call; one store query)."""
    fresh = stamps(bank_id, cases)
    found = {}
    for c in cases:
        hit = _cache().get(_slot(bank_id, CaseKey.of(c), c.recall_query(), k, document_id_for(c.id), fresh[c.id]))
        if hit is not None:
            found[c.id] = hit
    return found


def load_queue(
    bank_id: str, cases: Sequence[ExceptionCase], k: int, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Recall every case not cached fresh, at most 4 in flight; returns counts: cached, loaded, failed."""
    return _filler(bank_id)(cases, k, progress)


def queue_fingerprint(ids: Sequence[str]) -> int:
    """A queue's identity for its once-per-process background job: the hash of its ids in order, which Python
    computes in C (Streamlit hashing the ids themselves, as the cache key, was Python work on every run)."""
    return hash(tuple(ids))


def prefetch_queue(
    bank_id: str, cases: Sequence[ExceptionCase], k: int, after: str | None = None, ids: Sequence[str] | None = None
) -> Future:
    """Recall in the background the PREFETCH_AHEAD cases after `after` (where J and N go next), wrapping round:
    the whole queue when it is no longer. `ids`: the cases' ids, when the caller has them already."""
    ids = [c.id for c in cases] if ids is None else ids
    start = ids.index(after) + 1 if after in ids else 0
    ahead = list(cases[start : start + PREFETCH_AHEAD])
    ordered = ahead + list(cases[: min(start, PREFETCH_AHEAD - len(ahead))])
    pages, asked = background(), itertools.count()

    def reviewers_first() -> None:
        pages.after_page_runs(0.0 if next(asked) < PREFETCH_SOON else QUIET_S)

    fill = _filler(bank_id, in_flight=BACKGROUND_IN_FLIGHT, before_each=reviewers_first)

    def job() -> dict[str, int]:
        # A chunk at a time: the job holds the GIL to key a chunk's cases, never the whole queue's, so the
        # reviewer's runs on the script thread are not held up by 100,000 cases keyed at once.
        totals: Counter[str] = Counter()
        for at in range(0, len(ordered), BACKGROUND_CHUNK):
            totals.update(fill(ordered[at : at + BACKGROUND_CHUNK], k))
        return dict(totals)

    generation = resources.freshness().generation(bank_id)
    return _prefetch(bank_id, queue_fingerprint(ids), k, start // PREFETCH_STRIDE, generation, _job=job)


@st.cache_resource(show_spinner=False, max_entries=64)
def _prefetch(
    bank_id: str, queue: int, k: int, stride: int, generation: int, _job: Callable[[], dict[str, int]]
) -> Future:
    # Once per (bank, queue, k, stride of the queue, the bank's freshness generation) per server process, whatever the
    # clicks, reruns and sessions: a decision anywhere makes its scope's recalls stale, and the window's next job
    # recalls just those (the rest are cache hits) before a reviewer's key reaches them. An expired entry is recalled
    # when its case is opened (recall_case).
    return background().submit((bank_id, queue, k, stride, generation), _job)


def _filler(
    bank_id: str, in_flight: int = RECALL_CONCURRENCY, before_each: Callable[[], None] | None = None
) -> Callable[..., dict[str, int]]:
    """The queue loader (`in_flight` recalls at once), bound on the script thread to this process's gateway, cache,
    log and store: the background job calls it off the script thread, where no Streamlit call belongs. `before_each`:
    called (in a worker thread) before each recall starts."""
    gateway, cache, log, casework = resources.gateway(), _cache(), resources.recall_log(), resources.casework()
    origin = resources.outbox().provenance.origin  # bound here, on the script thread
    freshness = resources.freshness()

    def fill(
        cases: Sequence[ExceptionCase], k: int, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        fresh = stamps(bank_id, cases, freshness)
        slots = {
            c.id: _slot(bank_id, CaseKey.of(c), c.recall_query(), k, document_id_for(c.id), fresh[c.id]) for c in cases
        }
        todo = [c for c in cases if cache.get(slots[c.id]) is None]
        counts = {"cached": len(cases) - len(todo), "loaded": 0, "failed": 0}

        async def timed(case: ExceptionCase) -> TwoStageResult:
            slot = slots[case.id]
            if before_each is not None:
                await asyncio.to_thread(before_each)
            with cache.computing(slot):  # in flight from when it is asked, not while it queues behind the others
                started = time.perf_counter()  # inside the coroutine: its own wait on the server, not the other jobs'
                result = await atwo_stage_recall(
                    gateway.arecall,
                    bank_id,
                    CaseKey.of(case),
                    case.recall_query(),
                    k=k,
                    own_document=document_id_for(case.id),
                )
                log.add_latency("finance", (time.perf_counter() - started) * 1000)
                cache.put(slot, result)  # under the stamp read before: a decision since makes it stale
            return result

        def arrived(i: int, result: TwoStageResult | BaseException) -> None:
            if isinstance(result, BaseException):
                counts["failed"] += 1
                return
            counts["loaded"] += 1
            _keep_flags(casework, origin, bank_id, {todo[i].id: result}, gateway)

        if todo:
            gateway.recall_many(
                [(lambda c=c: timed(c)) for c in todo], concurrency=in_flight, progress=progress, on_result=arrived
            )
        return counts

    return fill

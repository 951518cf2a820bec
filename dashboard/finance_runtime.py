"""Streamlit-side caching for the finance page: one RecallCache per server process.

Results are cached per (bank, query, tags, mode, k); a decision retained for a vendor and type
invalidates that pair only (its next render recalls again), other cases keep their results. A TTL
picks up what other writers (agents, other servers) retained meanwhile. The queue loader fills the same
cache with bounded concurrency (HindsightGateway.recall_many), so opening a loaded case makes no call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import streamlit as st

from dashboard import runtime
from dashboard.finance_recall import CaseKey, TwoStageResult, atwo_stage_recall, check_crowd_out, two_stage_recall
from dashboard.models import ExceptionCase
from dashboard.recall_cache import RecallCache

RECALL_TTL_S = 300


@st.cache_resource
def recall_cache() -> RecallCache:
    return RecallCache(ttl_s=RECALL_TTL_S)


def generation(bank_id: str, key: CaseKey) -> int:
    return recall_cache().generation(bank_id, key)


def bump_generation(bank_id: str, key: CaseKey) -> None:
    """A decision was retained for this vendor and type: recall it again next time (only it)."""
    recall_cache().invalidate(bank_id, key)


def recall_case(bank_id: str, key: CaseKey, query: str, k: int) -> TwoStageResult:
    cache = recall_cache()
    cached = cache.get(bank_id, key, query, k)
    if cached is not None:
        return cached
    log = runtime.recall_log()
    with st.spinner("Recalling precedents..."), log.timed("finance two-stage"):
        result = two_stage_recall(runtime.gateway().recall, bank_id, key, query, k=k)
    log.add_finance(result)
    cache.put(result, query)
    return result


def with_crowd_out(bank_id: str, key: CaseKey, query: str, k: int) -> TwoStageResult:
    """The result with its crowd-out check: pass 2 reused, or one extra call (once per cache entry) when it was skipped."""
    base = recall_case(bank_id, key, query, k)
    if base.crowd_out is not None:
        return base
    log = runtime.recall_log()
    with st.spinner("Checking crowd-out..."), log.timed("finance crowd-out check"):
        result = check_crowd_out(runtime.gateway().recall, base)
    log.add_finance(result)
    recall_cache().put(result, query)
    return result


def load_queue(
    bank_id: str, cases: Sequence[ExceptionCase], k: int, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Recall every case not cached yet, at most 4 in flight; fills the cache the case view reads.

    No trace is requested; each case costs one call (pass 1 fills k) or two. Returns counts:
    cached (already there), loaded, failed."""
    cache = recall_cache()
    todo = [c for c in cases if cache.get(bank_id, CaseKey.of(c), c.recall_query(), k) is None]
    counts = {"cached": len(cases) - len(todo), "loaded": 0, "failed": 0}
    if not todo:
        return counts
    gateway = runtime.gateway()
    log = runtime.recall_log()

    async def timed_recall(case: ExceptionCase) -> TwoStageResult:
        # Timed inside the coroutine: its wall time includes waiting on the server, not on the other jobs.
        started = time.perf_counter()
        result = await atwo_stage_recall(gateway.arecall, bank_id, CaseKey.of(case), case.recall_query(), k=k)
        log.add_latency("finance two-stage", (time.perf_counter() - started) * 1000)
        return result

    jobs = [(lambda c=c: timed_recall(c)) for c in todo]
    for case, result in zip(todo, gateway.recall_many(jobs, progress=progress), strict=True):
        if isinstance(result, BaseException):
            counts["failed"] += 1
            continue
        counts["loaded"] += 1
        cache.put(result, case.recall_query())
        log.add_finance(result)
    return counts

"""Streamlit-side caching for the finance page: recall results per (bank, query, tags, k, generation).

The generation is a per-(bank, vendor, type) counter bumped when a decision is retained, so the next
render recalls again for that vendor and type (and only for it); other cases keep their cached
results. A TTL picks up what other writers (agents, other servers) retained meanwhile.
"""

from __future__ import annotations

import threading

import streamlit as st

from dashboard import runtime
from dashboard.finance_recall import CaseKey, TwoStageResult, check_crowd_out, two_stage_recall

RECALL_TTL_S = 300


@st.cache_resource
def _generations() -> tuple[dict[tuple[str, str, str], int], threading.Lock]:
    return {}, threading.Lock()


def generation(bank_id: str, key: CaseKey) -> int:
    counters, _ = _generations()
    return counters.get((bank_id, key.vendor_code, key.exception_type), 0)


def bump_generation(bank_id: str, key: CaseKey) -> None:
    counters, lock = _generations()
    with lock:
        slot = (bank_id, key.vendor_code, key.exception_type)
        counters[slot] = counters.get(slot, 0) + 1


@st.cache_data(ttl=RECALL_TTL_S, max_entries=500, show_spinner="Recalling precedents...")
def _cached_recall(base_url: str, bank_id: str, query: str, vendor: str, etype: str, name: str, k: int, gen: int) -> TwoStageResult:
    # base_url and gen are part of the cache key only.
    key = CaseKey(vendor_code=vendor, exception_type=etype, vendor_name=name)
    log = runtime.recall_log()
    with log.timed("finance two-stage"):
        result = two_stage_recall(runtime.gateway().recall, bank_id, key, query, k=k)
    log.add_finance(result)
    return result


def _args(bank_id: str, key: CaseKey, query: str, k: int) -> tuple:
    return (runtime.settings().base_url, bank_id, query, key.vendor_code, key.exception_type, key.vendor_name, k,
            generation(bank_id, key))  # fmt: skip


def recall_case(bank_id: str, key: CaseKey, query: str, k: int) -> TwoStageResult:
    return _cached_recall(*_args(bank_id, key, query, k))


@st.cache_data(ttl=RECALL_TTL_S, max_entries=500, show_spinner="Checking crowd-out...")
def _cached_crowd_out(base_url: str, bank_id: str, query: str, vendor: str, etype: str, name: str, k: int, gen: int) -> TwoStageResult:
    base = _cached_recall(base_url, bank_id, query, vendor, etype, name, k, gen)
    log = runtime.recall_log()
    with log.timed("finance crowd-out check"):
        result = check_crowd_out(runtime.gateway().recall, base)
    log.add_finance(result)
    return result


def with_crowd_out(bank_id: str, key: CaseKey, query: str, k: int) -> TwoStageResult:
    """The result with its crowd-out check: pass 2 reused, or one extra call (once per cache entry) when it was skipped."""
    return _cached_crowd_out(*_args(bank_id, key, query, k))

"""Streamlit-side caching for the finance page: recall results per (bank, query, tags, k, generation).

The generation is a per-(bank, vendor, type) counter bumped when a decision is retained, so the next
render recalls again for that vendor and type (and only for it); other cases keep their cached
results. A TTL picks up what other writers (agents, other servers) retained meanwhile.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import streamlit as st

from dashboard import runtime
from dashboard.hindsight_gateway import HindsightGateway
from dashboard.finance_recall import CaseKey, TwoStageResult, check_crowd_out, two_stage_recall

RECALL_TTL_S = 300
WORKERS = 4  # the server saturates near 4 recalls in flight on 2 cores


class PooledGateway:
    """recall/retain on a few long-lived worker threads, each with its own Hindsight client.

    The client's sync methods bind an aiohttp session to the event loop of the thread that first used
    it; Streamlit runs scripts on changing threads, so one shared client fails from the second thread
    on ("Timeout context manager should be used inside a task"). Here a client never changes thread.
    """

    def __init__(self, base_url: str, api_key: str | None):
        self._local = threading.local()
        self._base_url, self._api_key = base_url, api_key
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="finance-hindsight")

    def _client(self) -> HindsightGateway:
        if not hasattr(self._local, "gateway"):
            self._local.gateway = HindsightGateway(self._base_url, self._api_key)
        return self._local.gateway

    def recall(self, bank_id: str, query: str, **kwargs):
        return self._pool.submit(lambda: self._client().recall(bank_id, query, **kwargs)).result()

    def retain(self, bank_id: str, records):
        return self._pool.submit(lambda: self._client().retain(bank_id, records)).result()


@st.cache_resource
def _pooled_gateway(base_url: str, api_key: str | None) -> PooledGateway:
    return PooledGateway(base_url, api_key)


def gateway() -> PooledGateway:
    s = runtime.settings()
    return _pooled_gateway(s.base_url, s.api_key)


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
    return two_stage_recall(gateway().recall, bank_id, key, query, k=k)


def _args(bank_id: str, key: CaseKey, query: str, k: int) -> tuple:
    return (runtime.settings().base_url, bank_id, query, key.vendor_code, key.exception_type, key.vendor_name, k,
            generation(bank_id, key))  # fmt: skip


def recall_case(bank_id: str, key: CaseKey, query: str, k: int) -> TwoStageResult:
    return _cached_recall(*_args(bank_id, key, query, k))


@st.cache_data(ttl=RECALL_TTL_S, max_entries=500, show_spinner="Checking crowd-out...")
def _cached_crowd_out(base_url: str, bank_id: str, query: str, vendor: str, etype: str, name: str, k: int, gen: int) -> TwoStageResult:
    return check_crowd_out(gateway().recall, _cached_recall(base_url, bank_id, query, vendor, etype, name, k, gen))


def with_crowd_out(bank_id: str, key: CaseKey, query: str, k: int) -> TwoStageResult:
    """The result with its crowd-out check: pass 2 reused, or one extra call (once per cache entry) when it was skipped."""
    return _cached_crowd_out(*_args(bank_id, key, query, k))

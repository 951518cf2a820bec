"""What the agents actually recalled: Hindsight's audit log synced into the review store, a case's then
versus now, and the incidents found in the agents' runs (their kinds kept beside each case's flags)."""

from __future__ import annotations

import logging

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from dashboard.agents.audit_sync import sync_bank
from dashboard.agents.cause_inputs import explained
from dashboard.agents.findings import case_then_now, find_incidents, store_incident_kinds
from dashboard.agents.incidents import Incident
from dashboard.agents.then_now import ThenNow
from dashboard.app import resources
from dashboard.app.recall_cache import RecallCache
from dashboard.hindsight.errors import HindsightError

INCIDENTS_TTL_S = 60.0
SYNC_EVERY_S = 30.0
logger = logging.getLogger(__name__)


@st.cache_data(ttl=60, show_spinner=False)
def audit_log_on(bank_id: str) -> bool:
    try:
        return resources.gateway().audit_log_enabled(bank_id)
    except HindsightError:
        return False


@st.cache_resource
def _synced() -> RecallCache:
    """The banks synced in the last 30 s (their entries expire)."""
    return RecallCache(max_entries=16, ttl_s=SYNC_EVERY_S)


def sync_audit_log(bank_id: str) -> int:
    """Sync a configured bank's audit log into the store, at most every 30 s; returns entries added."""
    if _synced().get(bank_id) is not None or not audit_log_on(bank_id):
        return 0
    _synced().put(bank_id, True)
    try:
        return sync_bank(resources.gateway(), resources.agent_runs(), bank_id).added
    except HindsightError:
        return 0


def then_now(bank_id: str, case_kind: str, case_id: str, now_records) -> ThenNow:
    """What the agent recalled for the case then (its latest run, as the audit log recorded it) beside now."""
    sync_audit_log(bank_id)
    store = resources.agent_runs()
    latest = store.latest_run(case_kind, case_id, bank_id)
    view = case_then_now(store, latest, now_records, audit_log_on(bank_id), resources.outbox().provenance.origin)
    statuses = resources.curation().statuses(bank_id, view.documents())
    view = view.with_curation(statuses)
    try:  # the causes are an explanation on top: without them the view still shows what changed
        return explained(resources.gateway(), statuses, view)
    except HindsightError:
        logger.warning("could not read why the evidence changed since the agent's recall", exc_info=True)
        return view


@st.cache_resource
def _incidents_cache() -> RecallCache:
    return RecallCache(max_entries=8, ttl_s=INCIDENTS_TTL_S)


def incidents(bank_ids: tuple[str, ...], fresh: bool = False) -> list[Incident]:
    """The incidents of the agents' runs in these banks, checked at most once a minute (`fresh`: now); each
    check keeps the cases' incident kinds in the review store for the queues and the Overview."""
    cache = _incidents_cache()
    found = None if fresh else cache.get(bank_ids)
    if found is not None:
        return found
    with st.spinner("Checking the agent runs for incidents..."):
        for bank in bank_ids:
            sync_audit_log(bank)
        store = resources.agent_runs()
        runs = [r for bank in bank_ids for r in store.runs(bank_id=bank)]
        found = find_incidents(resources.gateway(), store, resources.outbox(), runs)
    cache.put(bank_ids, found)
    try:
        store_incident_kinds(resources.casework(), runs, found)
    except SQLAlchemyError:  # the kinds are a by-product: the incidents still show
        logger.warning("could not keep the incident kinds in the review store", exc_info=True)
    return found

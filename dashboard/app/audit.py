"""What the agents actually recalled: Hindsight's audit log kept in the review store, a case's then versus now, and the
incidents found in the agents' runs (their kinds kept beside each case's flags).

No page reads the audit log from its start. The log is read into the store by one thread per server process
(`AuditReader`), forward from each bank's cursor: a new store's first catch-up (100,000 entries are minutes of
requests, one body each) and, after it, the entries written since, at most every READ_EVERY_S (`audit_reader.py`). A page asks for a read
(`keep_reading`), draws from what the store holds, and says how far a catch-up has got (`show_reading`); the few entries
it needs now (an agent run's own) it reads by id. Reviewers first: the reader fetches bodies only while no page runs."""

from __future__ import annotations

import hashlib
import logging

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from components.safe_text import md
from dashboard.agents.audit_sync import count_log, read_entries
from dashboard.agents.cause_inputs import explained
from dashboard.agents.findings import case_then_now, find_incidents, store_incident_kinds
from dashboard.agents.incidents import Incident
from dashboard.agents.then_now import ThenNow
from dashboard.app import resources
from dashboard.app.audit_reader import AuditReader
from dashboard.app.background import background
from dashboard.app.recall_cache import RecallCache
from dashboard.hindsight.errors import HindsightError
from dashboard.store.agent_runs import AgentRun, AuditSyncState

INCIDENTS_TTL_S = 60.0
QUIET_S = 3.0  # the reader fetches once no page has run for this long (at most background's 5 s of waiting): a second
# after the queue's own background recalls (finance/pages/recalls.py: QUIET_S), which a reviewer needs sooner
PROGRESS_EVERY_S = 3.0  # the catch-up's progress on a page, drawn again
logger = logging.getLogger(__name__)


@st.cache_data(ttl=60, show_spinner=False)
def audit_log_on(bank_id: str) -> bool:
    try:
        return resources.gateway().audit_log_enabled(bank_id)
    except HindsightError:
        return False


def _stop_reader(reader: AuditReader | None) -> None:
    if reader is not None:
        reader.stop()


@st.cache_resource(on_release=_stop_reader)
def reader() -> AuditReader:
    """This process's reader of the audit logs (its thread starts with the first read asked)."""
    return AuditReader(resources.gateway(), resources.agent_runs(), lambda: background().after_page_runs(QUIET_S))


def keep_reading(bank_ids: tuple[str, ...]) -> None:
    """Ask for the banks' logs to be read on (off this run); a page calls it and goes on with what the store holds."""
    reader().keep_reading(bank_ids)


def reading(bank_ids: tuple[str, ...]) -> list[AuditSyncState]:
    """The banks whose log is being caught up with (the store's count of entries read, and the log's)."""
    try:
        return [state for state in resources.agent_runs().sync_states(list(bank_ids)).values() if state.catching_up]
    except SQLAlchemyError:
        return []


def _progress_line(state: AuditSyncState) -> str:
    return (
        f"Reading Hindsight's audit log of {state.bank_id} in the background: {state.entries:,} of {state.log_entries:,} "
        "entries. What the agents recalled is shown as far as it has been read."
    )


def _states_counted(bank_ids: tuple[str, ...]) -> dict[str, AuditSyncState]:
    """The banks' sync states, a bank whose log the store never counted counted first, one request (the reader counts
    only once no page runs): a new store's first visit already says how much there is to read. One read of the
    states when every log is counted."""
    try:
        store = resources.agent_runs()
        states = store.sync_states(list(bank_ids))
    except SQLAlchemyError:
        return {}
    try:
        unknown = [bank for bank, state in states.items() if state.log_entries is None and audit_log_on(bank)]
        for bank in unknown:
            count_log(resources.gateway(), store, bank)
        return store.sync_states(list(bank_ids)) if unknown else states
    except (HindsightError, SQLAlchemyError) as exc:  # the reader counts it later
        logger.warning("could not count the audit log: %s", exc)
        return states


def show_reading(bank_ids: tuple[str, ...]) -> bool:
    """While a bank's log is being caught up with, say how far it has got, drawn again every few seconds (the page
    itself once it is done, with everything read); True when something is shown."""
    if not any(state.catching_up for state in _states_counted(bank_ids).values()):
        return False
    _reading_progress(bank_ids)
    return True


@st.fragment(run_every=PROGRESS_EVERY_S)
def _reading_progress(bank_ids: tuple[str, ...]) -> None:
    states = reading(bank_ids)
    if not states:
        st.rerun()  # the whole page again: its figures with the log read
    keep_reading(bank_ids)  # a read that stopped (the server was away) goes on
    for state in states:
        st.progress(
            min(1.0, state.entries / max(1, state.log_entries or 0)), text=md(_progress_line(state))
        )  # text is markdown


def _read_runs_entries(runs: list[AgentRun]) -> None:
    """The runs' own entries the store does not hold yet, each by id: a page needs them now, whatever the catch-up."""
    by_bank: dict[str, list[str]] = {}
    for run in runs:
        by_bank.setdefault(run.bank_id, []).extend(run.audit_ids)
    for bank, ids in by_bank.items():
        if ids:
            try:
                read_entries(resources.gateway(), resources.agent_runs(), bank, ids)
            except HindsightError:  # unreachable: the runs show what the agents themselves recorded
                logger.warning("could not read the agent runs' audit entries of %s", bank, exc_info=True)


def case_incidents(bank_id: str, case_kind: str, case_id: str) -> list[Incident]:
    """The incidents of one case's recorded agent runs (checked on those runs only; kept a minute like the queue's)."""
    store = resources.agent_runs()
    runs = store.runs(case_kind=case_kind, case_id=case_id, bank_id=bank_id)
    key = ("case", bank_id, case_kind, case_id, tuple(r.run_id for r in runs))
    found = _incidents_cache().get(key)
    if found is None:
        _read_runs_entries(runs)
        found = find_incidents(resources.gateway(), store, resources.outbox(), runs) if runs else []
        _incidents_cache().put(key, found)
    return found


def then_now(bank_id: str, case_kind: str, case_id: str, now_records) -> ThenNow:
    """What the agent recalled for the case then (its latest run, as the audit log recorded it) beside now."""
    keep_reading((bank_id,))
    store = resources.agent_runs()
    latest = store.latest_run(case_kind, case_id, bank_id)
    if latest is not None:
        _read_runs_entries([latest])
    view = case_then_now(store, latest, now_records, audit_log_on(bank_id), resources.outbox().provenance.origin)
    statuses = resources.curation().statuses(bank_id, view.documents())
    view = view.with_curation(statuses)
    # The causes take a dozen reads of the bank; every session showing this view (the same run, records now and
    # curation, all in the key) gets the same answer, kept a minute like the incidents for what the bank alone changes.
    key = ("causes", bank_id, hashlib.sha256(view.model_dump_json().encode()).hexdigest())
    known = _causes_cache().get(key)
    if known is not None:
        return known
    try:  # the causes are an explanation on top: without them the view still shows what changed
        found = explained(resources.gateway(), statuses, view)
    except HindsightError:
        logger.warning("could not read why the evidence changed since the agent's recall", exc_info=True)
        return view
    _causes_cache().put(key, found)
    return found


@st.cache_resource
def _causes_cache() -> RecallCache:
    return RecallCache(max_entries=64, ttl_s=INCIDENTS_TTL_S)


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
    keep_reading(bank_ids)
    with st.spinner("Checking the agent runs for incidents..."):
        store = resources.agent_runs()
        runs = [r for bank in bank_ids for r in store.runs(bank_id=bank)]
        _read_runs_entries(runs)  # their own entries, by id: never the log from its start
        found = find_incidents(resources.gateway(), store, resources.outbox(), runs)
    cache.put(bank_ids, found)
    try:
        store_incident_kinds(resources.casework(), runs, found)
    except SQLAlchemyError:  # the kinds are a by-product: the incidents still show
        logger.warning("could not keep the incident kinds in the review store", exc_info=True)
    return found

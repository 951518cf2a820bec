"""The Exceptions page's queue panel: filters, sort and the "needs me" toggles, and while the panel is open its table
(flags from the review store) and bulk acceptance. Its table is drawn only while it is open, so a key press redraws
the case alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

import streamlit as st

from components.decision_form import drafted_cases
from components.workflow import keep_selection, my_queue_filter
from dashboard.agents.incidents import incident_text
from dashboard.app import resources
from dashboard.finance import queue as exception_queue
from dashboard.finance.models import EXCEPTION_TYPES, ExceptionCase
from dashboard.finance.pages import bulk as finance_bulk
from dashboard.finance.pages import case as finance_case
from dashboard.finance.pages.queue_filters import approval_filter, second_review_filter
from dashboard.finance.pages.shown_queue import shown_queue, vendor_choices
from dashboard.finance.recall import DEFAULT_K
from dashboard.review.figures import held_statuses
from dashboard.store.identity import Person

QUEUE_KEY = "exception_queue"
QUEUE_OPEN = "exception_queue_open"  # the panel's state: its table and bulk approval are drawn only while it is open
# Pinned to the left: what a reviewer scans the queue for stays in view at 1440 wide, without scrolling sideways.
KEY_COLUMNS = ("case", "exact precedents", "agent recommends", exception_queue.PLAIN_SEARCH_MISSES, "incident")


@dataclass
class Queue:
    cases: Sequence[ExceptionCase]
    shown: Sequence[ExceptionCase]
    ids: Sequence[str]  # the shown cases' ids, in order: read by every key and link of the run
    decided: Mapping  # case id -> the state and outcome of its latest decision in this bank (DecisionState)
    held: Mapping  # case id -> its decision awaiting a second approval, or returned by one
    blind: dict  # case id -> its first decision awaiting a blind second review or a lead
    k: int
    table_open: bool  # the panel is open: its table and bulk approval are drawn


def queue_panel(
    bank: str, cases: Sequence[ExceptionCase], decided: Mapping, me: Person | None, today: date
) -> tuple[Queue, list[int], st.delta_generator.DeltaGenerator]:
    """The queue: filters, sort, "My queue", "Needs my approval"; while the panel is open, the table (flags from the
    review store) and bulk approval. Returns (queue, the table's selected rows, the caption's placeholder above the
    panel, where the counts show while it is closed)."""
    settings = resources.settings()
    held = resources.decisions().held_cases(bank, finance_case.KIND)
    blind = resources.decisions().blind_cases(bank, finance_case.KIND)
    k = int(st.session_state.get("exceptions_k", DEFAULT_K))
    caption = st.empty()
    # One label always: the label is part of the panel's identity, and a new one (say, a count) would close it.
    panel = st.expander(
        "Queue: filters, table, bulk acceptance", icon=":material/list:", key=QUEUE_OPEN, on_change="rerun"
    )
    if not panel.open:  # the table is not drawn: the address bar says which case is open, not a stale row
        st.session_state.pop(QUEUE_KEY, None)
    with panel:
        f1, f2, f3, f4 = st.columns(4, vertical_alignment="bottom")
        vendors = f1.multiselect("Vendor", vendor_choices(cases), key="filter_vendor")
        types = f2.multiselect("Type", list(EXCEPTION_TYPES), key="filter_type")
        statuses = f3.multiselect("Status", list(exception_queue.STATUSES), key="filter_status")
        sort = f4.selectbox("Sort", list(exception_queue.SORTS), key="queue_sort")
        with st.container(horizontal=True, gap="large"):  # the toggles' labels read in full, never "Needs …"
            mine = my_queue_filter(
                resources.casework(), bank, finance_case.KIND, me and me.name, key="exceptions_my_queue"
            )
            to_approve = approval_filter(held, me)
            to_review, to_lead = second_review_filter(blind, me, lead=False), second_review_filter(blind, me, lead=True)
        shown, ids = shown_queue(cases, decided, held, blind, (tuple(vendors), tuple(types), tuple(statuses)), sort)
        for only in (mine, to_approve, to_review, to_lead):
            if only is not None:
                shown = [c for c in shown if c.id in only]
                ids = [c.id for c in shown]
        queue = Queue(
            cases=cases, shown=shown, ids=ids, decided=decided, held=held, blind=blind, k=k, table_open=panel.open
        )
        keep_selection(QUEUE_KEY, "case", queue.ids, decided, finance_case.KEYS.goto)
        if not panel.open:  # a key press while the panel is closed redraws the case alone
            return queue, [], caption
        flags = resources.casework().flags(bank, "exception")  # measured as cases are recalled, kept in the store
        table = exception_queue.queue_frame(
            shown, decided, today, flags, {c: incident_text(f) for c, f in flags.items()}, held_statuses(held, blind)
        )
        drafts = set(drafted_cases())  # this session's unsent drafts, marked beside the status
        table["status"] = [
            f"{status}, unsent draft" if case in drafts else status
            for case, status in zip(table["case"], table["status"])
        ]
        event = st.dataframe(
            exception_queue.with_sla(table, settings.sla_days),
            key=QUEUE_KEY,
            on_select="rerun",
            selection_mode="single-row",
            hide_index=True,
            width="stretch",
            column_config={
                "invoice amount": st.column_config.NumberColumn(format="%.2f"),
                "variance": st.column_config.NumberColumn(format="%+.2f"),
                **{c: st.column_config.Column(pinned=True) for c in KEY_COLUMNS},
                "incident": st.column_config.Column(pinned=True, width="medium"),
            },  # its words in full, never "crowd-ou"
        )
        finance_bulk.bulk_bar(bank, queue, me and me.name)
    return queue, list(event.selection.rows), caption
